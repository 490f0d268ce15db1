#!/usr/bin/env node
// Thin launcher: the bundled program lives in dist/ (built by `npm run build`, run by `prepare`).
import { run } from '../dist/cli.js';

process.exitCode = await run();
