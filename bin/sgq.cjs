#!/usr/bin/env node
'use strict';
// Thin launcher: the bundled program lives in dist/ (built by `npm run build`, run by `prepare`).
// It is CommonJS so that a start-up never pays for the ES module loader (see scripts/build.mjs).

// Node 22.1+ caches compiled code between runs, which shortens every start; older lines skip it.
require('node:module').enableCompileCache?.();

require('../dist/cli.cjs')
  .run()
  .then((code) => {
    process.exitCode = code;
  });
