import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// uPlot's minified script and its style, for the page of `sgq history --html` (history-page.ts
// imports this module only when it writes a page). From the sources (the tests) they are read
// from the installed package; the build replaces this module with dist/vendor/uplot.cjs, which
// holds both texts, so an installed sgq needs no node_modules for them.

const require = createRequire(typeof __filename === 'string' ? __filename : join(process.cwd(), 'sgq.js'));
const read = (file: string): string => readFileSync(require.resolve(`uplot/dist/${file}`), 'utf8');

export const script: string = read('uPlot.iife.min.js');
export const style: string = read('uPlot.min.css');
