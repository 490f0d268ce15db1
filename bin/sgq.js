#!/usr/bin/env node
// Thin launcher: the bundled program lives in dist/ (built by `npm run build`, run by `prepare`).
import module from 'node:module';

// Node 22.1+ caches compiled code between runs, which shortens every start; older lines skip it.
module.enableCompileCache?.();

const { run } = await import('../dist/cli.js');
process.exitCode = await run();
