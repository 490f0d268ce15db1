import { execa } from 'execa';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

// Node prints a warning on stderr for what looks like a leak (MaxListenersExceededWarning, a
// listener per waiting job on stdout) or a deprecation: stderr is the user's, and a warning
// there reads as a failure. Every run below goes through the built binary into a pipe.

const sb = useSandboxProcess();
const NODE_WARNING = /\(node:\d+\)|Warning:/;
const USERS = ['jack', 'dorsey', 'alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy'];

const expectNoWarning = (r: { stderr: string; exitCode?: number }) => {
  expect(r.stderr).not.toMatch(NODE_WARNING);
  expect(r.exitCode).toBe(0);
};

describe('no Node warning on stderr', () => {
  it.each([
    ['three users, --all (--sandbox)', ['--sandbox', 'graph', 'followers', 'jack', 'dorsey', 'alice', '--all']],
    ['twelve users, --all, --concurrency 12', ['graph', 'followers', ...USERS, '--all', '--concurrency', '12']],
    ['several users, --all, --parallel 4', ['graph', 'followers', ...USERS.slice(0, 4), '--all', '--parallel', '4']],
    ['several users, --all, --jq', ['graph', 'followers', ...USERS, '--all', '--concurrency', '12', '--jq', '.follower_username']],
    ['several users, --all, -o csv', ['graph', 'followers', ...USERS, '--all', '--concurrency', '12', '-o', 'csv']],
    ['several users, --all, -o yaml', ['graph', 'following', ...USERS, '--all', '--concurrency', '12', '-o', 'yaml']],
  ])('%s', async (_name, args) => {
    expectNoWarning(await sgq(args, { env: sb.env() }));
  });

  it('users from stdin, many at once, into --out', async () => {
    const input = Array.from({ length: 60 }, (_, i) => `user_${i}`).join('\n');
    const out = join(tempDir(), 'f.ndjson');
    expectNoWarning(await sgq(['graph', 'followers', '-', '--all', '--concurrency', '16', '--out', out], { env: sb.env(), input }));
  });

  it('through shell pipes: | cat, and | head that leaves early', async () => {
    const run = (tail: string) =>
      execa('bash', ['-c', `"$NODE" "$BIN" graph followers ${USERS.join(' ')} --all --concurrency 12 2>"$ERR" | ${tail} >/dev/null; cat "$ERR"`], {
        env: { ...sb.env(), NODE: process.execPath, BIN, ERR: join(tempDir(), 'stderr'), SGQ_CONFIG_DIR: tempDir() },
        reject: false,
      });
    for (const tail of ['cat', 'head -n 3']) {
      const r = await run(tail);
      expect(r.stdout).not.toMatch(NODE_WARNING);
    }
  });
});
