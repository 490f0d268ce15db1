import { unlinkSync } from 'node:fs';

// Removing one file that sgq made (a flag, a temporary file): gone already is no error.
// Not fs.rmSync(path, { force: true }): on Node 20 that loads and runs the recursive remover
// (internal/fs/rimraf, an lstat before the unlink) for one file, about 2M instructions of a
// one-page run, which removes its calls-ledger flag at the end.

/** Removes the file `path`; a file that is not there is no error, anything else (a folder, no permission) throws. */
export function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
