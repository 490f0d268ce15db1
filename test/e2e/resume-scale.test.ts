import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

/** Runs a printed resume command as a user would paste it, in a shell, with this build for `sgq`. */
function paste(command: string, env: Record<string, string>, cwd: string) {
  const local = command.replace(/(^|\| )sgq /, `$1'${process.execPath}' '${BIN}' `);
  return execa('sh', ['-c', local], { env: { SGQ_CONFIG_DIR: tempDir(), NO_COLOR: '', ...env }, cwd, reject: false, timeout: 30_000 });
}

const resumeOf = (stderr: string): string => /resume with: (.*)$/m.exec(stderr)![1]!;

describe('a printed resume appends validly to what the failed run wrote', () => {
  const failing = useSandboxProcess(['--fail-page', '3']);
  const healthy = useSandboxProcess();

  it('csv: the rest comes without a header, in the same columns, onto FILE.partial', async () => {
    const dir = tempDir();
    const out = join(dir, 'f.csv');
    // Several users: the columns include query_user, which a one-user resume must keep.
    const r = await sgq(['graph', 'followers', 'a_700', 'big_2000', '--all', '-o', 'csv', '--out', out, '--retries', '0', '--concurrency', '1'], { env: failing.env() });
    expect(r.exitCode).toBe(7);
    const resume = resumeOf(r.stderr);
    expect(resume).toContain('--no-header');
    expect((await paste(resume, healthy.env(), dir)).exitCode).toBe(0);
    const full = await sgq(['graph', 'followers', 'a_700', 'big_2000', '--all', '-o', 'csv', '--concurrency', '1'], { env: healthy.env() });
    expect(readFileSync(`${out}.partial`, 'utf8')).toBe(full.stdout + '\r\n');
  });

  it('json: the rest goes to a new file, and the two arrays hold the whole export', async () => {
    const dir = tempDir();
    const out = join(dir, 'f.json');
    const r = await sgq(['graph', 'followers', 'big_2000', '--all', '-o', 'json', '--out', out, '--retries', '0'], { env: failing.env() });
    expect(r.exitCode).toBe(7);
    const resume = resumeOf(r.stderr);
    expect(resume).toContain(`--out ${join(dir, 'f.2.json')}`);
    expect((await paste(resume, healthy.env(), dir)).exitCode).toBe(0);
    const first = JSON.parse(readFileSync(`${out}.partial`, 'utf8')) as unknown[];
    const rest = JSON.parse(readFileSync(join(dir, 'f.2.json'), 'utf8')) as unknown[];
    const full = await sgq(['graph', 'followers', 'big_2000', '--all', '-o', 'json'], { env: healthy.env() });
    expect([...first, ...rest]).toEqual(JSON.parse(full.stdout));
  });

  it('ndjson with --limit: the rest is exactly what the limit had left', async () => {
    const dir = tempDir();
    const out = join(dir, 'f.ndjson');
    const r = await sgq(['graph', 'followers', 'big_2000', '--all', '--limit', '1800', '--out', out, '--retries', '0'], { env: failing.env() });
    expect(r.exitCode).toBe(7);
    const resume = resumeOf(r.stderr);
    expect(resume).toContain('--limit 800');
    expect((await paste(resume, healthy.env(), dir)).exitCode).toBe(0);
    const full = await sgq(['graph', 'followers', 'big_2000', '--all', '--limit', '1800'], { env: healthy.env() });
    expect(readFileSync(`${out}.partial`, 'utf8')).toBe(full.stdout + '\n');
  });
});

describe('a long list on stdin', () => {
  const sandbox = useSandboxProcess();
  it('200,000 users against a service that is down: a 24 MiB heap, one line, and every user saved for the resume', async () => {
    // A port that refuses connections: listen, note the port, close.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));

    const dir = tempDir();
    const out = join(dir, 'f.ndjson');
    const users = Array.from({ length: 200_000 }, (_, i) => `user${i}`);
    // Duplicates further down are asked (and saved) once.
    const input = `${users.join('\n')}\n${users.slice(0, 1000).join('\n')}\n`;
    const r = await sgq(['graph', 'followers', '-', '--retries', '0', '--out', out, '--summary', 'json'], {
      env: { SGQ_BASE_URL: `http://127.0.0.1:${port}`, SGQ_API_KEY: 'k' },
      input,
      // Bounded, not holding a request or a promise per user: it passes with 8 MiB on a quiet
      // machine; 16 ran out twice in some thirty suites on 2 busy cores (GC falling behind).
      nodeFlags: ['--max-old-space-size=24'],
      timeout: 60_000,
    });
    expect(r.exitCode, r.stderr.slice(-300)).toBe(7);
    const unreachable = r.stderr.split('\n').filter((l) => l.includes('unreachable'));
    expect(unreachable).toHaveLength(1);
    expect(unreachable[0]).toMatch(/stopped after 3 users failed in a row; [3-7] users failed, 199,99[3-7] were not attempted; their list is in \S+f\.ndjson\.remaining; resume them with: sgq graph followers - -o ndjson --summary json --retries 0 < \S+f\.ndjson\.remaining >> \S+f\.ndjson\.partial$/);
    // The users in flight when the run stopped were tried: the two counts make the whole list.
    const [, failed, notTried] = /; (\d) users failed, ([\d,]+) were not attempted/.exec(unreachable[0]!)!;
    expect(Number(failed) + Number(notTried!.replaceAll(',', ''))).toBe(200_000);
    expect(readFileSync(`${out}.remaining`, 'utf8')).toBe(`${users.join('\n')}\n`);
    const summary = JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!) as { remaining: number; totals: { users: number } };
    expect(summary.remaining).toBe(200_000);
  }, 90_000);

  it('many users: the summary lists the users that failed, and counts the rest', async () => {
    const users = Array.from({ length: 1500 }, (_, i) => (i % 500 === 7 ? `nobody${i}` : `user${i}`));
    const r = await sgq(['metadata', 'userid', '-', '--concurrency', '16', '--summary', 'json', '--quiet'], { env: sandbox.env(), input: users.join('\n') });
    expect(r.exitCode).toBe(4);
    const summary = JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!) as { listed: string; users: { user: string }[]; totals: { users: number; failed: number; records: number } };
    expect(summary.listed).toBe('failed');
    expect(summary.users.map((u) => u.user)).toEqual(['nobody7', 'nobody507', 'nobody1007']);
    expect(summary.totals).toMatchObject({ users: 1500, failed: 3, records: 1497 });
  }, 60_000);
});
