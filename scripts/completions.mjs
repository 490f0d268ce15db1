// Writes the completion scripts in completions/ from the built binary (`npm run completions`
// builds it first). With --check, writes nothing and fails when a checked-in copy has drifted.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const FILES = { bash: 'sgq.bash', zsh: '_sgq', fish: 'sgq.fish' };
const root = new URL('..', import.meta.url);
const bin = fileURLToPath(new URL('bin/sgq.cjs', root));
const check = process.argv.includes('--check');

mkdirSync(new URL('completions/', root), { recursive: true });
let stale = 0;
for (const [shell, name] of Object.entries(FILES)) {
  const file = new URL(`completions/${name}`, root);
  const script = execFileSync(process.execPath, [bin, 'completion', shell], { encoding: 'utf8' });
  const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (current === script) continue;
  if (check) {
    console.error(`completions/${name} differs from \`sgq completion ${shell}\`; run \`npm run completions\``);
    stale += 1;
  } else {
    writeFileSync(file, script);
    console.error(`wrote completions/${name}`);
  }
}
process.exitCode = stale ? 1 : 0;
