// Bundles src/cli.ts into dist/ with esbuild. Dependencies are bundled too, so a start-up
// resolves no node_modules and an install downloads nothing else; the network stack, the
// formatters and the sandbox are split into chunks that load only when a command needs them.
import { build } from 'esbuild';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

rmSync('dist', { recursive: true, force: true });
const result = await build({
  entryPoints: { cli: 'src/cli.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  metafile: true,
  legalComments: 'none',
  chunkNames: 'chunks/[name]-[hash]',
  // Bundled CommonJS dependencies call require(); give each ESM chunk one, created on first use
  // so that chunks which never call it do not pay for it at start-up.
  banner: {
    js: "import { createRequire as __sgqCreateRequire } from 'node:module'; let __sgqRequire; const require = (id) => (__sgqRequire ??= __sgqCreateRequire(import.meta.url))(id);",
  },
  plugins: [noChildProcessForCommander, noSignalHooksFromWhenExit],
  logLevel: 'warning',
});

// Bundled code still owes its authors their notices: collect every bundled package's license.
const packageDirs = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
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
