import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NO_RENAME = [
  { name: 'node:fs', importNames: ['rename', 'renameSync'], message: 'replace files through src/fs/atomic.ts' },
  { name: 'node:fs/promises', importNames: ['rename'], message: 'replace files through src/fs/atomic.ts' },
  // Threads start in one place (src/threads/lane.ts), which decides between a thread and the main thread.
  { name: 'node:worker_threads', importNames: ['Worker'], message: 'start a thread through src/threads/lane.ts' },
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'completions/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Tests look for ANSI escape codes on purpose.
    files: ['test/**/*.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // The launcher is CommonJS so that start-up skips the ES module loader (scripts/build.mjs).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Files are replaced in one place (src/fs/atomic.ts): nothing else renames into place.
    files: ['src/**/*.ts'],
    ignores: ['src/fs/**', 'src/threads/lane.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: NO_RENAME }] },
  },
  {
    // The CLI and the package's entry see the snapshot store and the diff through their faces
    // (src/core/snapshots/snapshots.ts, src/core/diff/diff.ts); what is behind them, and the
    // record reading and sorting both stand on (src/core/records, src/core/sort), is theirs.
    files: ['src/cli/**/*.ts', 'src/lib.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: NO_RENAME,
        patterns: [
          { group: ['**/core/diff/*', '!**/core/diff/diff.js'], message: 'import the diff from src/core/diff/diff.ts' },
          { group: ['**/core/snapshots/*', '!**/core/snapshots/snapshots.js'], message: 'import the snapshot store from src/core/snapshots/snapshots.ts' },
          { group: ['**/core/records/*', '**/core/sort/*'], message: 'records and their sort serve the snapshot store and the diff: import those faces' },
        ],
      }],
    },
  },
  {
    // The file layer stands beside the core and the CLI, and imports neither the CLI nor the sandbox.
    files: ['src/fs/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/cli/**', '**/sandbox/**'], message: 'src/fs imports neither the CLI nor the sandbox' }] }] },
  },
  {
    // The core is the library: it never touches the process, argv, a terminal or the CLI's
    // packages, and it imports neither the CLI nor the sandbox (README, "Layout").
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: NO_RENAME,
        patterns: [
          { group: ['**/cli/**', '**/sandbox/**'], message: 'the core imports neither the CLI nor the sandbox' },
          { group: ['commander', 'ora', 'chalk', 'cli-table3', 'node:tty', 'node:readline'], message: 'terminal and argv belong to the CLI' },
        ],
      }],
      'no-restricted-globals': ['error', { name: 'process', message: 'the core takes env, signals and streams as options' }],
    },
  },
  {
    // The one read of the process in the core: V8's old generation, which V8 does not report,
    // is read from node's own flag (--max-old-space-size) in old-space.ts: a fact of the
    // runtime, as the heap statistics it corrects are, not the library's configuration.
    files: ['src/core/sort/old-space.ts'],
    rules: { 'no-restricted-globals': 'off' },
  },
  {
    // The worker lane serves the core (sgq diff) and the CLI (--jq, --dataset): like the core,
    // it imports neither the CLI nor the sandbox, and touches no process.
    files: ['src/threads/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/cli/**', '**/sandbox/**', '**/core/**'], message: 'src/threads imports neither the core, the CLI nor the sandbox' }] }],
      'no-restricted-globals': ['error', { name: 'process', message: 'the lane takes what it needs as arguments' }],
    },
  },
  {
    // Parquet (src/parquet) is a library of its own: records in, bytes out through a sink the
    // caller gives. It imports neither the CLI nor the sandbox, touches no terminal, and reads
    // nothing of the process (argv, env, streams): node:zlib alone is loaded through it, lazily.
    files: ['src/parquet/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: NO_RENAME,
        patterns: [
          { group: ['**/cli/**', '**/sandbox/**'], message: 'Parquet imports neither the CLI nor the sandbox' },
          { group: ['commander', 'ora', 'chalk', 'cli-table3', 'node:tty', 'node:readline'], message: 'terminal and argv belong to the CLI' },
        ],
      }],
      'no-restricted-properties': ['error', ...['argv', 'env', 'stdin', 'stdout', 'stderr', 'exit', 'exitCode', 'on', 'once'].map((property) => ({ object: 'process', property, message: 'Parquet takes what it needs as options' }))],
    },
  },
  {
    // The sandbox shares only the route table (and the spec's texts) with the rest.
    files: ['src/sandbox/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/cli/**'], message: 'the sandbox does not import the CLI' }] }] },
  },
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
);
