import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lines, runSgq, tempDir } from '../helpers/run.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

// Text the service controls is shown, never obeyed (issue 34): an error record, a 401's
// message, a field name or a user name that holds control sequences reaches stderr escaped,
// whatever stderr is (here a pipe, as a cron log file is); csv, tsv, --jq and the JSON
// formats are escaped on a terminal and exact, byte for byte, into a pipe or a file.
// test/e2e/terminal-injection.test.ts runs the same in a real terminal.

const stubs = useStubs();

// OSC 52 (writes the clipboard), OSC 0 (the window title), CSI 2J (clears the screen), then a
// carriage return and a line feed that start lines forging sgq's own, C1's CSI, a
// right-to-left override and a line separator.
const HOSTILE = 'x\u001b]52;c;aGFja2Vk\u0007\u001b]0;pwned\u0007\u001b[2J\rsgq: done\nsgq: done\u009b31m\u202eevil\u2028';
const SHOWN = 'x\\u{1b}]52;c;aGFja2Vk\\u{7}\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\rsgq: done\\nsgq: done\\u{9b}31m\\u{202e}evil\\u{2028}';
// What a terminal would act on, anywhere but sgq's own line breaks.
const ACTS = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

const env = (url: string, more: Record<string, string> = {}) => ({ SGQ_BASE_URL: url, SGQ_API_KEY: 'k', ...more });

/** stderr holds nothing a terminal acts on but its line breaks, and no line sgq did not write. */
function expectInert(stderr: string): string[] {
  expect(stderr.replaceAll('\n', '')).not.toMatch(ACTS);
  const said = lines(stderr);
  expect(said.filter((l) => l === 'sgq: done')).toEqual([]);
  return said;
}

describe('stderr shows the service\'s text escaped', () => {
  it('an error record: one line, every control sequence escaped', async () => {
    const stub = await stubs([{ body: { data: [{ error: HOSTILE }], current_credits: 10 } }]);
    const r = await runSgq(['graph', 'followers', 'jack'], { env: env(stub.url) });
    expect(r.code).toBe(4);
    expect(expectInert(r.stderr)).toEqual([`sgq: jack: the service answered: ${SHOWN}`]);
  });

  it("with colour, sgq's own style is applied after the escaping", async () => {
    const stub = await stubs([{ body: { data: [{ error: HOSTILE }], current_credits: 10 } }]);
    const r = await runSgq(['graph', 'followers', 'jack'], { env: env(stub.url, { FORCE_COLOR: '1' }) });
    expect(r.stderr).toBe(`\u001b[31msgq:\u001b[39m jack: the service answered: ${SHOWN}\n`);
  });

  it('a 401 message, thrown to the top-level printer (sgq credits --refresh)', async () => {
    const stub = await stubs(() => ({ status: 401, body: { message: HOSTILE.replace('\n', ' ') } }));
    const r = await runSgq(['credits', '--refresh'], { env: env(stub.url) });
    expect(r.code).toBe(3);
    const said = expectInert(r.stderr);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(SHOWN.replace('\\n', ' '));
  });

  it('a warning naming a field, the summary naming a user and the error, with --verbose', async () => {
    const stub = await stubs((req) => {
      const { user, page } = JSON.parse(req.body) as { user: string; page?: number };
      if (user === 'bad') return { body: { data: [{ error: HOSTILE }], current_credits: 10 } };
      return page === 2 ? { body: envelope(2, null, [{ username: 'b', [HOSTILE]: 'late' }]) } : { body: envelope(1, 2, [{ username: 'a' }]) };
    });
    const r = await runSgq(['graph', 'followers', 'jack', 'bad', '--all', '-o', 'csv', '-v', '--concurrency', '1'], { env: env(stub.url) });
    expect(r.code).toBe(4);
    const said = expectInert(r.stderr);
    expect(said).toContain(`sgq: csv: column "${SHOWN}" first appeared after the header was written and is left out; name it in --fields to keep it`);
    expect(said).toContain(`sgq: bad: the service answered: ${SHOWN}`);
    expect(said.find((l) => l.startsWith('  bad: '))).toContain(`failed: the service answered: ${SHOWN}`);
  });

  it('--summary json stays one line of JSON holding the same text, nothing in it a terminal acts on', async () => {
    const stub = await stubs([{ body: { data: [{ error: HOSTILE }], current_credits: 10 } }]);
    const r = await runSgq(['graph', 'followers', 'jack', '--summary', 'json', '--quiet'], { env: env(stub.url) });
    expect(r.code).toBe(4);
    const said = expectInert(r.stderr);
    const summary = JSON.parse(said.at(-1)!) as { users: { errors: string[] }[] };
    expect(summary.users[0]!.errors).toEqual([`the service answered: ${HOSTILE}`]);
  });

  it("what a --jq filter writes on stderr itself keeps its line breaks, and nothing else acts", async () => {
    const stub = await stubs([{ body: envelope(1, null, [{ username: `${HOSTILE}.` }]) }]);
    const r = await runSgq(['graph', 'followers', 'jack', '--quiet', '--jq', '.username | stderr | empty'], { env: env(stub.url) });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr.replaceAll('\n', '')).not.toMatch(ACTS);
    expect(r.stderr).toContain(`${SHOWN.replace('\\n', '\n')}.`);
  });

  it('a user name on the line that resumes it', async () => {
    const stub = await stubs(() => 'reset');
    const name = 'evil\u001b[2Jname';
    const r = await runSgq(['graph', 'followers', name, 'b', 'c', 'd', '--retries', '0', '--concurrency', '1'], { env: env(stub.url) });
    expect(r.code).toBe(7);
    expectInert(r.stderr);
    expect(r.stderr).toContain('evil\\u{1b}[2Jname');
  });
});

describe('stdout: escaped on a terminal, exact into a pipe or a file', () => {
  const record = { username: HOSTILE, bio: 'tab\there' };
  const page = [{ body: envelope(1, null, [record]) }];
  const run = async (args: string[], stdoutIsTTY: boolean) => {
    const stub = await stubs(page);
    return runSgq(['graph', 'followers', 'jack', '--quiet', ...args], { env: env(stub.url), stdoutIsTTY });
  };

  it('csv', async () => {
    const tty = await run(['-o', 'csv'], true);
    expect(tty.stdout).toBe(`username,bio\r\n"${SHOWN}",tab\\there\r\n`);
    const pipe = await run(['-o', 'csv'], false);
    expect(pipe.stdout).toBe(`username,bio\r\n"${HOSTILE}",tab\there\r\n`);
  });

  it('tsv', async () => {
    const tty = await run(['-o', 'tsv'], true);
    expect(tty.stdout).toBe(`username\tbio\n${SHOWN}\ttab\\there\n`);
    const pipe = await run(['-o', 'tsv'], false);
    expect(pipe.stdout).toBe(`username\tbio\n${HOSTILE.replace('\r', '\\r').replace('\n', '\\n')}\ttab\\there\n`);
  });

  it('--jq raw strings: escaped but for their line breaks and tabs, which jq -r prints as they are', async () => {
    // Answered by sgq itself (the subset of jq), and by jq (ascii_downcase, @tsv).
    for (const filter of ['.username', '.username | ascii_downcase', '[.username, .bio] | @tsv']) {
      const tty = await run(['--jq', filter], true);
      const pipe = await run(['--jq', filter], false);
      expect(pipe.stdout.replaceAll('\n', '').replaceAll('\t', ''), filter).toMatch(ACTS);
      expect(tty.stdout.replaceAll('\n', '').replaceAll('\t', ''), filter).not.toMatch(ACTS);
    }
    const tty = await run(['--jq', '.username'], true);
    expect(tty.stdout).toBe(`${SHOWN.replace('\\n', '\n')}\n`);
    const pipe = await run(['--jq', '.username'], false);
    expect(pipe.stdout).toBe(`${HOSTILE}\n`);
  });

  it('ndjson: C1, the separators and the overrides as JSON escapes on a terminal, the same value', async () => {
    const tty = await run(['-o', 'ndjson'], true);
    expect(tty.stdout.replaceAll('\n', '')).not.toMatch(ACTS);
    expect(JSON.parse(tty.stdout)).toEqual(record);
    const pipe = await run(['-o', 'ndjson'], false);
    expect(pipe.stdout).toBe(`${JSON.stringify(record)}\n`);
  });

  it('--out FILE is exact even when stdout is a terminal', async () => {
    const out = join(tempDir(), 'f.csv');
    const r = await run(['--out', out], true);
    expect(r.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(`username,bio\r\n"${HOSTILE}",tab\there\r\n`);
  });
});
