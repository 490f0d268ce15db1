import { execFileSync } from 'node:child_process';

/** The end-to-end tests spawn the built binary, so build it once before any test runs. */
export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
