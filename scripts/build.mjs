// Bundles sgq into dist/ with esbuild. Dependencies are bundled too, so a start-up resolves no
// node_modules and an install downloads nothing else.
//
// The output is CommonJS: on Node 20 (no compile cache) the ES module loader alone costs a
// `sgq --help` about 10 ms, an eighth of its run, where require() costs next to nothing.
// CommonJS has no code splitting, so the lazy loading is laid out by hand:
//   dist/cli.cjs         the entry: answers --version, wires signals, then requires main.cjs
//   dist/main.cjs        all of sgq's own code, with commander and chalk; a module that is only
//                        import()ed (each command's runner, the sandbox) is compiled lazily
//   dist/vendor/*.cjs    the large dependencies that only some commands need (the network stack,
//                        the config store, the spinner, the table), each required on first use
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LAZY_PACKAGES = ['undici', 'conf', 'ora', 'cli-table3'];

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  metafile: true,
  legalComments: 'none',
  // import() becomes a require() on first use: the lazy parts stay lazy without the ES module loader.
  supported: { 'dynamic-import': false },
  logLevel: 'warning',
};

// Commander loads node:child_process at start-up for executable subcommands, which sgq does not
// have; a stub saves that load on every start.
const noChildProcessForCommander = {
  name: 'no-child-process-for-commander',
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      args.importer.includes('node_modules/commander/') ? { path: 'child_process', namespace: 'commander-stub' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'commander-stub' }, () => ({
      contents: "module.exports = { spawn() { throw new Error('sgq has no executable subcommands'); } };",
      loader: 'js',
    }));
  },
};

// conf writes through atomically, which loads when-exit: that module hooks SIGINT and SIGTERM at
// import and re-raises the signal at the process, so one Ctrl-C arrived twice and cut sgq's
// graceful stop short. sgq handles signals in one place (src/cli.ts); its config writes are
// synchronous, so there is no temporary file for when-exit to clean up.
const noSignalHooksFromWhenExit = {
  name: 'no-signal-hooks-from-when-exit',
  setup(b) {
    b.onResolve({ filter: /^when-exit$/ }, () => ({ path: 'when-exit', namespace: 'when-exit-stub' }));
    b.onLoad({ filter: /.*/, namespace: 'when-exit-stub' }, () => ({ contents: 'export default () => () => {};', loader: 'js' }));
  },
};

// Points an import at another file of dist/ instead of bundling it.
const requireFromDist = (name, filter, target) => ({
  name,
  setup(b) {
    b.onResolve({ filter }, (args) => ({ path: target(args.path), external: true }));
  },
});

rmSync('dist', { recursive: true, force: true });
mkdirSync('dist/vendor', { recursive: true });

const builds = [
  build({
    ...common,
    entryPoints: ['src/cli.ts'],
    outfile: 'dist/cli.cjs',
    plugins: [requireFromDist('main-from-dist', /^\.\/main\.js$/, () => './main.cjs')],
  }),
  build({
    ...common,
    entryPoints: ['src/main.ts'],
    outfile: 'dist/main.cjs',
    plugins: [
      noChildProcessForCommander,
      requireFromDist('vendor-from-dist', new RegExp(`^(${LAZY_PACKAGES.join('|')})$`), (pkg) => `./vendor/${pkg}.cjs`),
    ],
  }),
  // sgq's own code is ES modules, so esbuild reads `import X from 'pkg'` the way Node does for a
  // CommonJS file: X is module.exports. An ES module package (conf, ora) therefore exports its
  // default export as module.exports; sgq uses no named export of those.
  ...LAZY_PACKAGES.map((pkg) =>
    build({
      ...common,
      stdin: { contents: `const m = require('${pkg}'); module.exports = m.__esModule ? m.default : m;`, resolveDir: '.', loader: 'js' },
      outfile: `dist/vendor/${pkg}.cjs`,
      plugins: [noSignalHooksFromWhenExit],
    }),
  ),
];
const results = await Promise.all(builds);

// Bundled code still owes its authors their notices: collect every bundled package's license.
const packageDirs = new Set();
for (const input of results.flatMap((r) => Object.keys(r.metafile.inputs))) {
  // The greedy match ends at the innermost node_modules, so nested copies count on their own.
  const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (m) packageDirs.add(m[1]);
}
const notices = [...packageDirs].sort().map((dir) => {
  const { name, version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)/i.test(f));
  const text = file ? readFileSync(join(dir, file), 'utf8').trim() : `License: ${license}`;
  return `${name}@${version} (${license})\n\n${text}\n`;
});
writeFileSync('dist/THIRD-PARTY-LICENSES.txt', `sgq bundles the following packages.\n\n${notices.join('\n' + '-'.repeat(72) + '\n\n')}`);
