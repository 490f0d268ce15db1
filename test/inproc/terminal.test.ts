import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/start/io.js';
import { main } from '../../src/cli/start/main.js';
import { runSgq, tempDir } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';
import { until } from '../helpers/wait.js';

const sb = useSandbox();

describe('on a terminal', () => {
  it('config set api-key prompts on stderr and echoes nothing of the key', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const dir = tempDir();
    const io: Io = { stdin, stdout, stderr, env: { SGQ_CONFIG_DIR: dir }, stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: true };
    const running = main(['config', 'set', 'api-key'], io);
    // The prompt appears once the command's module has loaded, however long that takes.
    await until(() => err.includes('api-key: '), 'the prompt on stderr');
    stdin.write('typed-secret-key-4321\n');
    expect(await running).toBe(0);
    expect(out + err).not.toContain('typed-secret-key-4321');
    const get = await runSgq(['config', 'get', 'api-key'], { env: { SGQ_CONFIG_DIR: dir } });
    expect(get.stdout).toBe('****4321\n');
  });

  it('shows a spinner while paging and the summary at the end', async () => {
    const r = await runSgq(['graph', 'followers', 'big_1500', '--all'], { env: sb.env(), stderrIsTTY: true, stdoutIsTTY: false });
    expect(r.stderr).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(r.stderr).toContain('graph followers');
    expect(r.stderr).toContain('3 pages, 1,500 records, 9 credits used');
  });

  it('a terminal that reports a width of 0 gets no spinner, and the export still ends', async () => {
    const r = await runSgq(['graph', 'followers', 'big_1500', '--all'], { env: { ...sb.env(), NO_COLOR: '1' }, stderrIsTTY: true, stderrColumns: 0 });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(r.stderr).toContain('3 pages, 1,500 records, 9 credits used');
  });

  it('a pipe on stderr gets neither spinner nor escape codes, even with --verbose', async () => {
    const r = await runSgq(['graph', 'followers', 'big_1500', '--all', '-v'], { env: sb.env() });
    expect(r.stderr).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(r.stderr).not.toMatch(/\u001b\[/);
    expect(r.stderr).toContain('3 pages, 1,500 records');
  });
});
