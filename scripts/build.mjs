// Bundles src/cli.ts into dist/ with esbuild. Dependencies are bundled too, so a start-up
// resolves no node_modules; the network stack, formatters and sandbox are split into chunks
// that load only when a command needs them.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { cli: 'src/cli.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  legalComments: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  // CommonJS dependencies (cli-table3) call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __sgqCreateRequire } from 'node:module'; const require = __sgqCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
