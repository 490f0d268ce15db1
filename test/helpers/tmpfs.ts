import { execaSync } from 'execa';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from './run.js';

/** Linux as root: a real small filesystem can be mounted, so a full disk is a real one. */
export const onLinuxAsRoot = process.platform === 'linux' && process.getuid?.() === 0;

/** Mounts a tmpfs of `size` (64k) on a fresh folder for the tests of a describe block; unmounted after them. */
export function useTmpfs(size = '64k'): { readonly path: string } {
  let disk = '';
  beforeAll(() => {
    disk = tempDir();
    execaSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', disk]);
  });
  afterAll(() => {
    execaSync('umount', [disk], { reject: false });
  });
  return {
    get path() {
      return disk;
    },
  };
}
