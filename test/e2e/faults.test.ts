import { describe, expect, it } from 'vitest';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';

// `sgq sandbox` fault switches, as a user would use them to test a script.

describe('sandbox --port', () => {
  const sb = useSandboxProcess();
  it('a port in use is a usage error with a way out', async () => {
    const port = new URL(sb.url).port;
    const r = await sgq(['sandbox', '--port', port, '--ttl', '5']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(`sgq: cannot listen on 127.0.0.1:${port}: the port is in use; choose another --port, or leave it out for a free one`);
  });

  it('an invalid --clock is a usage error that says so', async () => {
    const r = await sgq(['sandbox', '--clock', 'yesterday', '--ttl', '5']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('invalid --clock "yesterday"');
  });
});

describe('sandbox --fail-page', () => {
  const sb = useSandboxProcess(['--fail-page', '3']);
  it('an export stops at the failed page, keeps what it wrote and prints how to resume', async () => {
    const r = await sgq(['graph', 'followers', 'big_2000', '--all', '--retries', '1'], { env: sb.env() });
    expect(r.exitCode).toBe(7);
    expect(r.stdout.split('\n')).toHaveLength(1000);
    expect(r.stderr).toContain('page 3 failed');
    expect(r.stderr).toContain('resume with: sgq graph followers big_2000 --page 3 --all');
  });
});

describe('sandbox --reset-rate and --fail-rate', () => {
  const sb = useSandboxProcess(['--reset-rate', '0.2', '--fail-rate', '0.2', '--seed', '7']);
  it('retries carry a long export through resets and 503s', async () => {
    const r = await sgq(['graph', 'followers', 'big_5000', '--all', '--retries', '6', '-v'], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n')).toHaveLength(5000);
    expect(r.stderr).toMatch(/retry \d\/6/);
  });
});

describe('sandbox --latency-ms and --hang-rate', () => {
  const sb = useSandboxProcess(['--hang-rate', '1']);
  it('--timeout ends a request that never gets an answer', async () => {
    const r = await sgq(['graph', 'followers', 'jack', '--timeout', '0.5', '--retries', '0'], { env: sb.env() });
    expect(r.exitCode).toBe(7);
    expect(r.stderr).toContain('within 0.5s');
  });
});

describe('sandbox --malformed and --error-status', () => {
  const html = useSandboxProcess(['--malformed', 'html']);
  it('an HTML page instead of JSON is exit 7', async () => {
    const r = await sgq(['graph', 'followers', 'jack'], { env: html.env() });
    expect(r.exitCode).toBe(7);
    expect(r.stderr).toContain('HTML page');
  });
  const status = useSandboxProcess(['--error-status', '404']);
  it('error records carried by a 404 are still exit 4 with the message', async () => {
    const r = await sgq(['graph', 'followers', 'nobody'], { env: status.env() });
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain('no data for username = nobody');
  });
});

describe('sandbox --fail-first with 429 and Retry-After', () => {
  const sb = useSandboxProcess(['--fail-first', '1', '--fail-status', '429', '--retry-after', '1']);
  it('waits as asked and succeeds', async () => {
    const r = await sgq(['graph', 'followers', 'big_10', '-v'], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain('in 1000 ms: the service answered HTTP 429');
  });
});
