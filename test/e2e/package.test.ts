import { execa } from 'execa';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/run.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
// This machine's npm config may name settings npm no longer knows; that warning is not sgq's.
const npmWarnings = (stderr: string) => stderr.split('\n').filter((l) => /npm warn/i.test(l) && !/Unknown (user|env) config/.test(l));

let tarball: string;
let shipped: string[];

beforeAll(async () => {
  const packDir = tempDir('sgq-pack-');
  // With npm's scripts on, as a publish runs them (prepack strips the manifest); SGQ_BUILD=skip
  // keeps prepare from rebuilding the dist/ that other tests are running.
  const pack = await execa('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: root, env: { SGQ_BUILD: 'skip' } });
  const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
  tarball = join(packDir, info.filename);
  shipped = info.files.map((f) => f.path).sort();
}, 120_000);

describe('npm pack', () => {
  it('ships only what users need, with a manifest that names no build scripts', async () => {
    for (const path of shipped) expect(path).toMatch(/^(bin\/sgq\.cjs|dist\/.+\.(cjs|mjs|d\.[cm]ts|txt)|completions\/(sgq\.bash|_sgq|sgq\.fish)|README\.md|LICENSE|package\.json)$/);
    for (const needed of ['bin/sgq.cjs', 'dist/cli.cjs', 'dist/main.cjs', 'dist/vendor/undici.cjs', 'dist/lib/index.cjs', 'dist/lib/index.mjs', 'dist/types/lib.d.mts', 'dist/types/lib.d.cts', 'dist/types/sandbox/index.d.mts', 'dist/types/sandbox/index.d.cts', 'dist/THIRD-PARTY-LICENSES.txt', 'dist/help/sgq.txt', 'dist/help/sgq+graph+followers.txt', 'completions/sgq.bash', 'README.md', 'LICENSE']) {
      expect(shipped).toContain(needed);
    }
    const manifest = (await execa('tar', ['-xzOf', tarball, 'package/package.json'])).stdout;
    expect(JSON.parse(manifest)).not.toHaveProperty('scripts');
    // The clone's own manifest is back as it was.
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.prepare).toBeDefined();
  });

  it('installs globally into a working `sgq`', async () => {
    const prefix = tempDir('sgq-prefix-');
    const install = await execa('npm', ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball]);
    expect(npmWarnings(install.stderr)).toEqual([]);
    // Everything is bundled: the install brings no node_modules of its own.
    expect(readdirSync(join(prefix, 'lib', 'node_modules', 'sgq'))).not.toContain('node_modules');

    const elsewhere = tempDir('sgq-cwd-');
    const env = { PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, SGQ_CONFIG_DIR: tempDir() };
    const version = await execa('sgq', ['--version'], { cwd: elsewhere, env });
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+$/);
    const run = await execa('sgq', ['--sandbox', 'graph', 'followers', 'jack', '--limit', '2'], { cwd: elsewhere, env });
    expect(run.stdout.split('\n')).toHaveLength(2);
  }, 120_000);

  // The library in a fresh project (ESM, CommonJS, strict TypeScript under every resolution):
  // test/e2e/types-resolution.test.ts.
});
