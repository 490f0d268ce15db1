import { execa } from 'execa';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { until } from '../helpers/wait.js';

// The modes of every file sgq writes (docs/guarantees.md, "Files and their modes"): what holds
// data, a key or a trace is its owner's alone (0600, in folders 0700) whatever the umask; a
// dataset whose folder was opened to a group (chmod 750) shares its new files with that group.

const POSIX = process.platform !== 'win32';

/** Runs the built binary under `umask`, with the folders of `home` as its config, data and cache folders. */
function sgqUnder(umask: string, home: string, args: string[], options: { input?: string; env?: Record<string, string>; openStdin?: boolean } = {}) {
  return execa('sh', ['-c', `umask ${umask} && exec "$0" "$@"`, process.execPath, BIN, ...args], {
    reject: false,
    env: {
      SGQ_CONFIG_DIR: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
      XDG_CACHE_HOME: join(home, 'cache'),
      NO_COLOR: '',
      ...options.env,
    },
    input: options.input,
    stdin: options.input === undefined && !options.openStdin ? 'ignore' : undefined,
    timeout: 60_000,
  });
}

/** Every file and folder below `root` (links left out), with its permission bits. */
function modesBelow(root: string): Map<string, number> {
  const found = new Map<string, number>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) continue;
      found.set(relative(root, path), stat.mode & 0o7777);
      if (stat.isDirectory()) walk(path);
    }
  };
  walk(root);
  return found;
}

const octal = (modes: Map<string, number>) => Object.fromEntries([...modes].map(([path, mode]) => [path, mode.toString(8).padStart(4, '0')]));

describe.runIf(POSIX)('the mode of every file sgq writes', () => {
  for (const umask of ['022', '077']) {
    it(`under umask ${umask}: config, marks, snapshots, cache, credits note and ledger, pace file, lists of users left, --out, --trace, the dataset: files 0600, folders 0700`, async () => {
      const home = tempDir();
      const out = join(home, 'out');
      mkdirSync(out);
      chmodSync(out, 0o755);
      const runs: [string[], { input?: string; env?: Record<string, string> }?][] = [
        // The config file and its folder.
        [['config', 'set', 'timeout', '30']],
        // Snapshots, the dataset, cache entries, the credits note and calls ledger, --out, --trace, a trial account's pace file.
        [['--sandbox', 'graph', 'followers', 'jack', 'dorsey', '--all', '--snapshot', '--dataset', join(home, 'ds'), '--cache', '1h', '--trace', join(out, 'trace.ndjson'), '--out', join(out, 'f.ndjson')], { env: { SGQ_PLAN: 'trial' } }],
        // The --since-last marks.
        [['--sandbox', 'graph', 'followers', 'jack', '--all', '--since-last', '--out', join(out, 'g.ndjson')]],
        // A run stopped by its budget: the users left beside the config, and beside --out.
        [['--sandbox', 'graph', 'followers', '-', '--max-credits', '1'], { input: users(12) }],
        [['--sandbox', 'graph', 'followers', '-', '--max-credits', '1', '--out', join(out, 'h.ndjson')], { input: users(12) }],
        // A run that fails part-way keeps what it wrote as FILE.partial.
        [['--sandbox', 'graph', 'followers', 'jack', 'nobody', '--out', join(out, 'p.ndjson')]],
      ];
      for (const [args, options] of runs) {
        const r = await sgqUnder(umask, home, args, options);
        expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(args.includes('nobody') ? 4 : 0);
      }
      const modes = modesBelow(home);
      // The folders and files the test expects to find, so that a run that wrote nothing cannot pass.
      const names = [...modes.keys()];
      for (const expected of [
        /^config$/, /^config\/config\.json$/, /^config\/since-marks\.json$/,
        /^config\/credits\/@sandbox\/default\/note\.json$/, /^config\/credits\/@sandbox\/default\/calls\/.+/,
        /^config\/pace\/@sandbox\/default\/calls\.json$/, /^config\/remaining\/@sandbox\/default\/graph-followers\.txt$/,
        /^data\/sgq\/snapshots$/, /^data\/sgq\/snapshots\/@sandbox\/default\/graph\.get_followers\/username\/jack\/.+\.ndjson\.gz$/,
        /^data\/sgq\/snapshots\/@sandbox\/default\/graph\.get_followers\/username\/jack\/.+\.json$/,
        /^cache\/sgq\/[0-9a-f]{64}\.json$/,
        /^ds$/, /^ds\/sgq-dataset\.json$/, /^ds\/\.sgq\/staging$/, /^ds\/\.sgq\/records\/v1\/route=graph\.get_followers\/date=[\d-]+\/.+\.parquet$/,
        /^out\/f\.ndjson$/, /^out\/trace\.ndjson$/, /^out\/h\.ndjson\.remaining$/, /^out\/p\.ndjson\.partial$/,
      ]) {
        expect(names.some((name) => expected.test(name)), `${expected} among ${names.join(', ')}`).toBe(true);
      }
      modes.delete('out'); // the test's own folder
      const wrong = new Map([...modes].filter(([path, mode]) => mode !== (statSync(join(home, path)).isDirectory() ? 0o700 : 0o600)));
      expect(octal(wrong)).toEqual({});
    }, 120_000);
  }

  it('a lock file holds no data: 0644 less the umask', async () => {
    for (const [umask, mode] of [['022', 0o644], ['077', 0o600]] as const) {
      const home = tempDir();
      const file = join(home, 'f.ndjson');
      const holder = sgqUnder(umask, home, ['fmt', '-', '--out', file], { openStdin: true });
      await until(() => existsSync(`${file}.lock`), 'the run to lock --out');
      expect((statSync(`${file}.lock`).mode & 0o777).toString(8)).toBe(mode.toString(8));
      holder.kill('SIGTERM');
      await holder;
    }
  }, 60_000);

  it('a dataset folder opened to a group (chmod 750) shares what sgq adds with that group, under umask 077 too; compaction as well', async () => {
    const home = tempDir();
    const ds = join(home, 'ds');
    mkdirSync(ds);
    chmodSync(ds, 0o750);
    for (const user of ['jack', 'dorsey']) {
      const r = await sgqUnder('077', home, ['--sandbox', 'graph', 'followers', user, '--all', '--dataset', ds, '-q', '--out', join(home, `${user}.ndjson`)]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const compact = await sgqUnder('077', home, ['dataset', 'compact', ds]);
    expect(compact.exitCode, compact.stderr).toBe(0);
    const modes = modesBelow(ds);
    const names = [...modes.keys()];
    expect(names.some((n) => /^\.sgq\/records\/v2\/route=graph\.get_followers\/date=[\d-]+\/.+\.parquet$/.test(n)), names.join(', ')).toBe(true);
    expect(names).toContain('sgq-dataset.json');
    const wrong = new Map([...modes].filter(([path, mode]) => mode !== (statSync(join(ds, path)).isDirectory() ? 0o750 : 0o640)));
    expect(octal(wrong)).toEqual({});
    expect(statSync(ds).mode & 0o7777).toBe(0o750);
  }, 120_000);
});

function users(n: number): string {
  return Array.from({ length: n }, (_, i) => `u${i}_3\n`).join('');
}
