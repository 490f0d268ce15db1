// Bundles src/cli.ts into dist/ with esbuild. Dependencies are bundled too, so a start-up
// resolves no node_modules and an install downloads nothing else; the network stack, the
// formatters and the sandbox are split into chunks that load only when a command needs them.
import { build } from 'esbuild';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
  // CommonJS dependencies (cli-table3) call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __sgqCreateRequire } from 'node:module'; const require = __sgqCreateRequire(import.meta.url);" },
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
