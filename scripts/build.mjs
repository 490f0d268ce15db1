// Bundles sgq into dist/ with esbuild. Dependencies are bundled too, so a start-up resolves no
// node_modules and an install downloads nothing else.
//
// The output is CommonJS: on Node 20 (no compile cache) the ES module loader alone costs a
// `sgq --help` about 8 ms, a tenth of its run, where require() costs next to nothing.
// CommonJS has no code splitting: one bundle holds the CLI, and what only some commands need
// lies beside it, required on first use:
//   dist/launch.cjs      what bin/sgq.cjs requires first (src/cli/start/launch.ts): the pre-rendered help,
//                        and the load of cli.cjs with its code cache (src/cli/start/code-cache.ts)
//   dist/cli.cjs         the CLI: src/cli/start/entry.ts and all of sgq's own code, with commander and
//                        chalk; a module that is only import()ed (each command's runner, the
//                        sandbox) runs on first use. One file, not chunks: split by esbuild (ES
//                        modules, each file then made CommonJS), a one-page run loaded 53 files,
//                        280 kB, instead of 459 kB in one, and with a code cache took 25 ms more
//                        CPU (Node 20, 206 ms against 182 at load 5.6): files read and compiled one
//                        by one cost more than the code left out, which a code cache does not parse
//   dist/help/*.txt      every command's help as it prints into a pipe, served by bin/sgq.cjs
//   dist/vendor/*.cjs    the large dependencies that only some commands need (the network stack,
//                        the config store, the spinner, YAML, jq, Parquet), each required on first use
//   dist/vendor/build/jq.wasm  jq compiled to WebAssembly, read by dist/vendor/jq-wasm.cjs
//   dist/vendor/uplot.cjs  uPlot's script and style as two strings, for the page of
//                        `sgq history --html` (src/cli/commands/history/uplot-assets.ts), required by it alone
//   dist/jq-worker.cjs   the worker thread --jq runs jq in
//   dist/dataset-worker.cjs  the worker thread --dataset writes its Parquet parts in
//   dist/diff-worker.cjs the worker thread sgq diff reads the older side and joins partitions in
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { splitDeclarations } from './declarations.mjs';
import { jqWasmBulkIo } from './jq-wasm-io.mjs';

// The large dependencies that only some commands need, each bundled on its own into
// dist/vendor/NAME.cjs and required on first use. Each entry is the whole of what sgq gets from
// the package: an import of anything else from it is undefined in the bundle.
// sgq's own code is ES modules, so esbuild reads `import X from 'pkg'` the way Node does for a
// CommonJS file (X is module.exports): an ES module package exports its default as module.exports.
const esmDefault = (pkg) => `module.exports = require('${pkg}').default;`;
const VENDOR = {
  // undici's index also loads its HTTP/2 client, fetch, WebSocket, caches and mocks, about 30 ms
  // of every start; sgq uses a pool, the proxy agent and the request method.
  undici: `
    const Dispatcher = require('undici/lib/dispatcher/dispatcher');
    Object.assign(Dispatcher.prototype, require('undici/lib/api'));
    module.exports = { Pool: require('undici/lib/dispatcher/pool'), ProxyAgent: require('undici/lib/dispatcher/proxy-agent') };`,
  conf: esmDefault('conf'),
  ora: esmDefault('ora'),
  // jq 1.8 as WebAssembly, read from dist/vendor/build/jq.wasm (copied below): the package's
  // inline entry carried it as base64 in the script, some 2.5 MiB more of the worker's heap.
  'jq-wasm': "module.exports = require('jq-wasm');",
  // The reader, for `sgq dataset info` and `compact` only.
  hyparquet: "module.exports = require('hyparquet');",
};

// An import of a vendor package.
const VENDOR_PATHS = new RegExp(`^(${Object.keys(VENDOR).join('|')})$`);

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  metafile: true,
  legalComments: 'none',
  // esbuild's default, named because Node 20's load of dist/cli.cjs reads it as latin1
  // (src/cli/start/code-cache.ts): any other character is written as an escape.
  charset: 'ascii',
  // import() becomes a require() on first use: the lazy parts stay lazy without the ES module loader.
  supported: { 'dynamic-import': false },
  logLevel: 'warning',
};

const unused = (what) => `const unused = () => { throw new Error('sgq leaves ${what} out of its bundle'); };`;
const unusedObject = (what) => `${unused(what)} export default new Proxy({}, { get: unused });`;

// Modules that a dependency imports at start-up for features sgq never uses, replaced by stubs
// so that no run pays for loading them. A stub throws if it is used after all.
const STUBS = [
  // Commander's executable subcommands (sgq has none) need child_process.
  { importer: /node_modules\/commander\//, module: /^(node:)?child_process$/, contents: "module.exports = { spawn() { throw new Error('sgq has no executable subcommands'); } };" },
  // conf validates with ajv, migrates with semver and encrypts with crypto only when given a
  // schema, migrations or an encryption key; sgq gives none. Loading them cost about 20 ms of
  // every command that reads the config.
  { importer: /node_modules\/conf\//, module: /^ajv\/dist\/2020\.js$/, contents: `${unused('ajv')} export class Ajv2020 { constructor() { unused(); } }` },
  { importer: /node_modules\/conf\//, module: /^ajv-formats$/, contents: `${unused('ajv-formats')} export default unused;` },
  { importer: /node_modules\/conf\//, module: /^semver$/, contents: unusedObject('semver') },
  { importer: /node_modules\/conf\//, module: /^(node:)?crypto$/, contents: unusedObject('crypto') },
  // conf writes through atomically, which loads when-exit: that module hooks SIGINT and SIGTERM
  // at import and re-raises the signal at the process, so one Ctrl-C arrived twice and cut sgq's
  // graceful stop short. sgq handles signals in one place (src/cli/start/entry.ts); its config writes are
  // synchronous, so there is no temporary file for when-exit to clean up.
  { importer: /node_modules\//, module: /^when-exit$/, contents: 'export default () => () => {};' },
];

const stubs = {
  name: 'stubs',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      const index = STUBS.findIndex((stub) => stub.module.test(args.path) && stub.importer.test(args.importer));
      return index === -1 ? undefined : { path: String(index), namespace: 'stub' };
    });
    b.onLoad({ filter: /.*/, namespace: 'stub' }, (args) => ({ contents: STUBS[Number(args.path)].contents, loader: 'js' }));
  },
};

// Points an import at another file of dist/ instead of bundling it.
const requireFromDist = (name, filter, target) => ({
  name,
  setup(b) {
    b.onResolve({ filter }, (args) => ({ path: target(args.path), external: true }));
  },
});

// The package test packs the tree its setup built, with npm's scripts on (so prepack runs), while
// other tests run that tree: SGQ_BUILD=skip keeps prepare from rebuilding it under them.
if (process.env.SGQ_BUILD === 'skip' && existsSync('dist/cli.cjs')) process.exit(0);

rmSync('dist', { recursive: true, force: true });
mkdirSync('dist/vendor', { recursive: true });
// jq's WebAssembly, where the bundled jq-wasm (dist/vendor/jq-wasm.cjs) reads it: build/ beside itself.
mkdirSync('dist/vendor/build');
copyFileSync(createRequire(import.meta.url).resolve('jq-wasm/jq.wasm'), 'dist/vendor/build/jq.wasm');

const builds = [
  build({
    ...common,
    entryPoints: ['src/cli/start/entry.ts'],
    outfile: 'dist/cli.cjs',
    plugins: [
      stubs,
      requireFromDist('vendor-from-dist', VENDOR_PATHS, (path) => `./vendor/${path}.cjs`),
      requireFromDist('uplot-from-dist', /^\.\/uplot-assets\.js$/, () => './vendor/uplot.cjs'),
    ],
  }),
  // What bin/sgq.cjs requires before the CLI: pre-rendered help, and the load of cli.cjs with its code cache.
  build({ ...common, entryPoints: ['src/cli/start/launch.ts'], outfile: 'dist/launch.cjs' }),
  // uPlot's two files as strings (the sources read them from the package: src/cli/commands/history/uplot-assets.ts).
  build({
    ...common,
    stdin: { contents: "exports.script = require('uplot/dist/uPlot.iife.min.js'); exports.style = require('uplot/dist/uPlot.min.css');", resolveDir: '.', loader: 'js' },
    loader: { '.js': 'text', '.css': 'text' },
    outfile: 'dist/vendor/uplot.cjs',
  }),
  // --jq's worker thread (src/cli/jq/jq-worker.ts), started by cli.cjs from beside it.
  build({
    ...common,
    entryPoints: ['src/cli/jq/jq-worker.ts'],
    outfile: 'dist/jq-worker.cjs',
    plugins: [requireFromDist('jq-from-dist', /^jq-wasm$/, (pkg) => `./vendor/${pkg}.cjs`)],
  }),
  // --dataset's worker thread (src/cli/dataset/worker.ts), started by cli.cjs from beside it.
  build({
    ...common,
    entryPoints: ['src/cli/dataset/worker.ts'],
    outfile: 'dist/dataset-worker.cjs',
    plugins: [requireFromDist('parquet-from-dist', VENDOR_PATHS, (path) => `./vendor/${path}.cjs`)],
  }),
  // sgq diff's worker thread (src/core/diff/diff-worker.ts): the second core of a hash diff.
  build({
    ...common,
    entryPoints: ['src/core/diff/diff-worker.ts'],
    outfile: 'dist/diff-worker.cjs',
  }),
  ...Object.entries(VENDOR).map(([pkg, contents]) =>
    // jq-wasm's devices get a bulk path for jq's input and output (scripts/jq-wasm-io.mjs).
    build({ ...common, stdin: { contents, resolveDir: '.', loader: 'js' }, outfile: `dist/vendor/${pkg}.cjs`, plugins: [stubs, jqWasmBulkIo] }),
  ),
];
// The library (`import … from 'sgq'`, `require('sgq')`, and `sgq/sandbox`): CommonJS bundles
// beside the CLI's, sharing its vendor files, an ES module face over each, and type declarations.
const LIBRARY = { index: 'src/lib.ts', sandbox: 'src/sandbox/index.ts' };
builds.push(
  ...Object.entries(LIBRARY).map(([name, entry]) =>
    build({
      ...common,
      entryPoints: [entry],
      outfile: `dist/lib/${name}.cjs`,
      plugins: [stubs, requireFromDist('vendor-from-lib', VENDOR_PATHS, (path) => `../vendor/${path}.cjs`)],
    }),
  ),
);
const results = await Promise.all(builds);
const require = createRequire(import.meta.url);
for (const name of Object.keys(LIBRARY)) {
  const names = Object.keys(require(`../dist/lib/${name}.cjs`)).filter((n) => n !== 'default' && n !== '__esModule');
  writeFileSync(`dist/lib/${name}.mjs`, `import lib from './${name}.cjs';\nexport const { ${names.join(', ')} } = lib;\nexport default lib;\n`);
}
// The help of every command as it prints into a pipe or a file, which bin/sgq.cjs serves from
// dist/help/ without loading the CLI (see there), rendered by the CLI itself.
const { main } = await require('../dist/cli.cjs').loadMain();
async function capture(argv) {
  let out = '';
  const sink = { write: (text) => ((out += text), true), on() {}, once() {} };
  const io = { stdout: sink, stderr: sink, stdin: undefined, env: {}, stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false };
  const code = await main(argv, io);
  if (code !== 0) throw new Error(`sgq ${argv.join(' ')} exited ${code}: ${out}`);
  return out;
}
// Each command's name is its whole path (`graph followers`).
const commandPaths = (command) => (command.commands ?? []).flatMap((c) => [c.name.split(' '), ...commandPaths(c)]);
mkdirSync('dist/help');
for (const path of [[], ...commandPaths(JSON.parse(await capture(['describe', '--json'])))]) {
  writeFileSync(`dist/help/${['sgq', ...path].join('+')}.txt`, await capture([...path, '--help']));
}

const types = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.types.json'], { stdio: 'inherit' });
if (types.status !== 0) throw new Error('the type declarations did not build');
// `.d.mts` beside `.d.cts`: each condition of package.json's exports gets declarations of its own
// module kind (scripts/declarations.mjs).
splitDeclarations('dist/types');

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
// Code that follows a package's (src/parquet's Thrift, statistics and RLE follow hyparquet-writer's) owes its notice too.
notices.push(`${readFileSync('src/parquet/NOTICE-hyparquet-writer.txt', 'utf8').trim()}\n`);
writeFileSync('dist/THIRD-PARTY-LICENSES.txt', `sgq bundles the following packages.\n\n${notices.join('\n' + '-'.repeat(72) + '\n\n')}`);
