// Turns the one declaration tree tsc emits (ES module `.d.ts` files, as the package is
// "type": "module") into two: `.d.mts` for the `import` condition and `.d.cts` for `require`.
// One ESM `.d.ts` serving both made TypeScript read `require('sgq')` as an ES module
// ("Masquerading as ESM"): a `.cts` file under node16 could not import the package at all.
// The two trees differ only in the extension of their relative specifiers (`./x.mjs` finds
// `./x.d.mts`, `./x.cjs` finds `./x.d.cts`); the specifiers are located by TypeScript's own
// pre-processor, not by a pattern, and every one of them must name a declaration file written here.
import { readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';

const ts = createRequire(import.meta.url)('typescript');

const FLAVOURS = [
  { declaration: '.d.mts', script: '.mjs' },
  { declaration: '.d.cts', script: '.cjs' },
];

/** Every `.d.ts` under dir becomes a `.d.mts` and a `.d.cts`; the `.d.ts` is removed. */
export function splitDeclarations(dir) {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.d.ts')).map((f) => join(dir, f));
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const specifiers = relativeSpecifiers(file, text);
    for (const flavour of FLAVOURS) {
      const target = file.slice(0, -'.d.ts'.length) + flavour.declaration;
      writeFileSync(target, rewrite(text, specifiers, flavour));
    }
    rmSync(file);
  }
  for (const file of files) {
    for (const flavour of FLAVOURS) checkSpecifiers(file.slice(0, -'.d.ts'.length) + flavour.declaration);
  }
}

/** The relative module specifiers of a declaration file, with where their text starts. */
function relativeSpecifiers(file, text) {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.filter((f) => f.fileName.startsWith('.'))
    .map((f) => {
      // pos is that of the opening quote; the check keeps a change of that from going unseen.
      const start = f.pos + 1;
      if (!/['"]/.test(text[f.pos]) || text.slice(start, start + f.fileName.length) !== f.fileName || !f.fileName.endsWith('.js')) {
        throw new Error(`${file}: cannot place the specifier ${f.fileName}`);
      }
      return { start, end: start + f.fileName.length, name: f.fileName };
    })
    .sort((a, b) => a.start - b.start);
}

function rewrite(text, specifiers, flavour) {
  let out = '';
  let at = 0;
  for (const s of specifiers) {
    out += text.slice(at, s.start) + s.name.slice(0, -'.js'.length) + flavour.script;
    at = s.end;
  }
  return out + text.slice(at);
}

/** Each relative specifier of a written file names a declaration file of the same flavour. */
function checkSpecifiers(file) {
  const text = readFileSync(file, 'utf8');
  const flavour = FLAVOURS.find((f) => file.endsWith(f.declaration));
  for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const target = resolve(dirname(file), fileName.slice(0, -flavour.script.length) + flavour.declaration);
    if (!fileName.endsWith(flavour.script) || !existsSync(target)) throw new Error(`${file}: ${fileName} names no ${flavour.declaration} file`);
  }
}
