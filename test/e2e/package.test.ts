import { execa } from 'execa';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/run.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('npm pack', () => {
  it('ships only what users need, and installs globally into a working `sgq`', async () => {
    const packDir = tempDir('sgq-pack-');
    // dist/ is already built by the test setup; --ignore-scripts keeps pack from rebuilding it under other tests.
    const pack = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], { cwd: root });
    const [info] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
    const paths = info.files.map((f) => f.path).sort();
    for (const path of paths) expect(path).toMatch(/^(bin\/sgq\.cjs|dist\/.+\.(cjs|txt)|completions\/(sgq\.bash|_sgq|sgq\.fish)|README\.md|LICENSE|package\.json)$/);
    for (const needed of ['bin/sgq.cjs', 'dist/cli.cjs', 'dist/main.cjs', 'dist/vendor/undici.cjs', 'dist/THIRD-PARTY-LICENSES.txt', 'completions/sgq.bash', 'completions/_sgq', 'completions/sgq.fish', 'README.md', 'LICENSE']) {
      expect(paths).toContain(needed);
    }

    const prefix = tempDir('sgq-prefix-');
    await execa('npm', ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', join(packDir, info.filename)]);
    // Everything is bundled: the install brings no node_modules of its own.
    expect(readdirSync(join(prefix, 'lib', 'node_modules', 'sgq'))).not.toContain('node_modules');

    const elsewhere = tempDir('sgq-cwd-');
    const env = { PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, SGQ_CONFIG_DIR: tempDir() };
    const version = await execa('sgq', ['--version'], { cwd: elsewhere, env });
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+$/);
    const run = await execa('sgq', ['--sandbox', 'graph', 'followers', 'jack', '--limit', '2'], { cwd: elsewhere, env });
    expect(run.stdout.split('\n')).toHaveLength(2);
  }, 120_000);
});
