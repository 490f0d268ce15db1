import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The end-to-end tests spawn the built binary, so build it once before any test runs.
 * Every folder and file a test makes in the temporary folder (its own, and what the sgq it
 * runs spills there) goes under one folder of this run, removed when the run ends: a suite
 * left nothing behind on its own, and runs by the thousand filled the disk once. sgq's cache
 * folder (the --cache answers, Node 20's code cache in code/) is there too: a test that means
 * the real default (~/.cache/sgq) says so with an XDG_CACHE_HOME of its own, or none.
 */
export default function setup(): () => void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  const root = mkdtempSync(join(tmpdir(), 'sgq-suite-'));
  chmodSync(root, 0o1777); // as /tmp is: other users the tests run as may make files there
  process.env.TMPDIR = root;
  // Runs of the built sgq kept their compiled code in the user's ~/.cache/sgq/code, some
  // 270 MB of entries after a day of suites, each named for a checkout's dist folder.
  process.env.XDG_CACHE_HOME = join(root, 'cache');
  return () => {
    try {
      rmSync(root, { recursive: true, force: true });
    } catch (error) {
      // A tmpfs a test mounted there and could not unmount: the run's results stand.
      console.warn(`the tests' temporary folder ${root} stays: ${(error as Error).message}`);
    }
  };
}
