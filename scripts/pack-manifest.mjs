// `npm pack` and `npm publish` ship package.json as it is on disk. Its `prepare` script builds a
// clone (`npm ci`), but in the tarball it is a script npm 11 warns about on every install, and
// it cannot run there (scripts/ is not shipped). prepack takes it out; postpack puts it back.
//   node scripts/pack-manifest.mjs strip|restore
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

const manifest = 'package.json';
const kept = '.package.json.prepack';
const action = process.argv[2];

if (action === 'strip') {
  // A pack killed half-way left the original aside: restore it before stripping again.
  if (existsSync(kept)) renameSync(kept, manifest);
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  writeFileSync(kept, text);
  delete pkg.scripts;
  delete pkg.devDependencies;
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (action === 'restore') {
  if (existsSync(kept)) renameSync(kept, manifest);
} else {
  process.stderr.write('usage: node scripts/pack-manifest.mjs strip|restore\n');
  process.exit(2);
}
