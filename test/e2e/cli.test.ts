import { execa } from 'execa';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { BIN, sgq, useSandboxProcess } from '../helpers/e2e.js';
import { connectProxy, httpsServer } from '../helpers/network.js';
import { tempDir } from '../helpers/run.js';

// The spec's two-field records: these tests are about the binary, streams and files (300,000
// service-shaped records would pass execa's 100 MB buffer); sandbox-shapes.test.ts runs both shapes.
const sb = useSandboxProcess(['--shape', 'spec']);
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('the built binary', () => {
  it('prints its version and help', async () => {
    const v = await sgq(['--version']);
    expect(v.exitCode).toBe(0);
    expect(v.stdout).toBe(pkg.version);
    const h = await sgq(['--help']);
    expect(h.stdout).toContain('graph');
    expect(h.stdout).toContain('Examples:');
    const sub = await sgq(['graph', 'followers', '--help']);
    expect(sub.stdout).toContain('--all');
    expect(sub.stdout).toContain('Examples:');
  });

  it('run from a clone that was never built, it says how to build instead of a stack trace', async () => {
    const clone = tempDir();
    mkdirSync(join(clone, 'bin'));
    copyFileSync(BIN, join(clone, 'bin', 'sgq.cjs'));
    const r = await execa(process.execPath, [join(clone, 'bin', 'sgq.cjs'), '--help'], { reject: false });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe('sgq: the built program (dist/) is missing; run `npm ci` or `npm run build` in the sgq folder');
  });

  it('run from a build cut short (dist/ without the CLI), it says how to build, on every Node line', async () => {
    const clone = tempDir();
    mkdirSync(join(clone, 'bin'));
    mkdirSync(join(clone, 'dist'));
    copyFileSync(BIN, join(clone, 'bin', 'sgq.cjs'));
    copyFileSync(join(dirname(BIN), '..', 'dist', 'launch.cjs'), join(clone, 'dist', 'launch.cjs'));
    for (const env of [{}, { NODE_DISABLE_COMPILE_CACHE: '1' }]) {
      const r = await execa(process.execPath, [join(clone, 'bin', 'sgq.cjs'), 'graph', 'followers', 'jack'], { reject: false, env: { ...env, XDG_CACHE_HOME: tempDir() } });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toBe('sgq: the built program (dist/) is missing; run `npm ci` or `npm run build` in the sgq folder');
    }
  });

  it('--sandbox runs a first command with no account', async () => {
    const r = await sgq(['--sandbox', 'graph', 'followers', 'jack', '--limit', '3']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n')).toHaveLength(3);
    expect(JSON.parse(r.stdout.split('\n')[0]!)).toHaveProperty('follower_username');
    // SGQ_SANDBOX_SHAPE=spec: the spec's example shape; anything else is a configuration error.
    const spec = await sgq(['--sandbox', 'graph', 'followers', 'jack', '--limit', '1'], { env: { SGQ_SANDBOX_SHAPE: 'spec' } });
    expect(Object.keys(JSON.parse(spec.stdout) as object)).toEqual(['username', 'last_checked']);
    const bad = await sgq(['--sandbox', 'graph', 'followers', 'jack'], { env: { SGQ_SANDBOX_SHAPE: 'json' } });
    expect(bad.exitCode).toBe(3);
    expect(bad.stderr).toBe('sgq: invalid SGQ_SANDBOX_SHAPE "json"; use one of: service, spec, or unset it');
  });

  it('exports every follower with --all against a sandbox process', async () => {
    const r = await sgq(['graph', 'followers', 'big_2600', '--all'], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    const names = r.stdout.split('\n').map((l) => (JSON.parse(l) as { username: string }).username);
    expect(names).toHaveLength(2600);
    expect(new Set(names).size).toBe(2600);
    expect(r.stderr).toBe('');
  });

  // The bundle carries only the parts of undici that sgq uses: these are the paths beyond a plain pool.
  it('goes through a proxy, and over TLS with a CA from NODE_EXTRA_CA_CERTS', async () => {
    const server = await httpsServer(cleanups);
    const proxy = await connectProxy(cleanups);
    const via = await sgq(['info'], { env: { SGQ_BASE_URL: server.url, NODE_EXTRA_CA_CERTS: server.certFile, HTTPS_PROXY: proxy.url, https_proxy: '', NO_PROXY: '', no_proxy: '' } });
    expect(via.exitCode).toBe(0);
    expect(JSON.parse(via.stdout)).toEqual({ ok: true });
    expect(proxy.tunnels()).toBe(1);
    const tls = await sgq(['info'], { env: { SGQ_BASE_URL: server.url, NODE_EXTRA_CA_CERTS: server.certFile } });
    expect(tls.exitCode).toBe(0);
    expect(JSON.parse(tls.stdout)).toEqual({ ok: true });
    const untrusted = await sgq(['info'], { env: { SGQ_BASE_URL: server.url } });
    expect(untrusted.exitCode).toBe(7);
    expect(untrusted.stderr).toMatch(/not trusted/);
  });

  it('streams: 600 pages fit a 16 MiB heap in every format but table, which must hold every row', async () => {
    const run = (format: string) =>
      sgq(['graph', 'followers', 'big_300000', '--all', '-o', format, '--quiet'], { env: sb.env(), nodeFlags: ['--max-old-space-size=16'], timeout: 60_000 });
    for (const format of ['ndjson', 'json', 'csv']) {
      const r = await run(format);
      expect(r.exitCode, `${format}: ${r.stderr.slice(0, 200)}`).toBe(0);
      expect(r.stdout.split('\n').length).toBeGreaterThanOrEqual(300_000);
    }
    // The control: holding the 300,000 records does not fit, so the limit is tight enough to
    // catch a format that kept its pages.
    const table = await run('table');
    expect(table.exitCode).not.toBe(0);
    expect(table.stderr).toMatch(/heap/i);
  }, 120_000);

  it('writes --out atomically', async () => {
    const file = join(tempDir(), 'out.csv');
    const r = await sgq(['graph', 'following', 'big_900', '--all', '-o', 'csv', '--out', file], { env: sb.env() });
    expect(r.exitCode).toBe(0);
    expect(readFileSync(file, 'utf8').split('\r\n').filter(Boolean)).toHaveLength(901);
  });

  it.each([
    [['graph', 'followers', 'jack', '--page', '0'], 2],
    [['graph', 'followers', 'nobody'], 4],
    [['lists', 'members', '1'], 6],
  ])('%j exits %i', async (args, code) => {
    const r = await sgq(args, { env: sb.env() });
    expect(r.exitCode).toBe(code);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('exit 3 with no key, 5 with an expired key, 7 with no server', async () => {
    expect((await sgq(['graph', 'followers', 'jack'], { env: { SGQ_BASE_URL: sb.url } })).exitCode).toBe(3);
    const expired = await sgq(['graph', 'followers', 'jack'], { env: { ...sb.env(), SGQ_API_KEY: 'sgq-expired-key' } });
    expect(expired.exitCode).toBe(5);
    expect(expired.stderr).toContain('Current credits: 0');
    expect((await sgq(['info', '--retries', '0'], { env: { SGQ_BASE_URL: 'http://127.0.0.1:1' } })).exitCode).toBe(7);
  });

  it('reads the API key from stdin for config set, and uses it', async () => {
    const env = { SGQ_CONFIG_DIR: tempDir(), SGQ_BASE_URL: sb.url };
    expect((await sgq(['config', 'set', 'api-key'], { env, input: 'sgq-demo-key\n' })).exitCode).toBe(0);
    expect((await sgq(['graph', 'followers', 'jack', '--limit', '1'], { env })).exitCode).toBe(0);
  });

  it('stops quietly when the reader exits (| head)', async () => {
    const r = await execa('bash', ['-o', 'pipefail', '-c', `node ${BIN} graph followers big_200000 --all | head -n 2; echo "status=\${PIPESTATUS[0]}" >&2`], {
      env: { ...sb.env(), SGQ_CONFIG_DIR: tempDir() },
      reject: false,
    });
    expect(r.stdout.split('\n')).toHaveLength(2);
    expect(r.stderr).toMatch(/status=(0|141)/);
    expect(r.stderr).not.toContain('EPIPE');
  });

  it('a reader of stderr that exits early does not turn a usage error into a crash', async () => {
    const r = await execa('bash', ['-c', `node ${BIN} graph 2>&1 >/dev/null | head -c 10 >/dev/null; echo "status=\${PIPESTATUS[0]}"`], { reject: false });
    expect(r.stdout).toBe('status=2');
  });

  it('a stderr whose reader is gone before sgq writes to it is no crash: a warning of a run, a usage error', async () => {
    // sgq makes process.stderr only when it first writes (src/cli/start/stderr-on-use.ts); the
    // handler that keeps EPIPE from crashing the run must come with it.
    const closedStderr = async (args: string[]) => {
      const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...sb.env(), SGQ_CONFIG_DIR: tempDir() }, stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr.destroy(); // before the child can have started, let alone written
      return new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    };
    expect(await closedStderr(['graph', 'followers', 'alice'])).toBe(0); // "there are more pages"
    expect(await closedStderr(['graph', 'followers', 'alice', '--fields', 'nope'])).toBe(0); // and a warning before it
    expect(await closedStderr(['graph'])).toBe(2);
  });

  it('a stdout that cannot be written (disk full) is a failure, not a quiet end', async () => {
    const r = await execa('bash', ['-c', `node ${BIN} graph followers big_3000 --all > /dev/full`], {
      env: { ...sb.env(), SGQ_CONFIG_DIR: tempDir() },
      reject: false,
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe('sgq: cannot write to stdout: the disk is full (ENOSPC); free some space on it; nothing more was fetched');
  });

  it('SIGINT stops the run, keeps complete lines and exits 130', async () => {
    const child = execa(process.execPath, [BIN, 'graph', 'followers', 'slow_200000', '--all'], {
      env: { ...sb.env(), SGQ_CONFIG_DIR: tempDir() },
      reject: false,
    });
    let seen = 0;
    const onData = (c: Buffer) => {
      seen += c.length;
      if (seen <= 100_000) return;
      // One signal only: a second Ctrl-C ends sgq at once, by design.
      child.stdout!.off('data', onData);
      child.kill('SIGINT');
    };
    child.stdout!.on('data', onData);
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(r.stdout.endsWith('}')).toBe(true);
    for (const line of r.stdout.split('\n')) JSON.parse(line);
    expect(r.stderr).toContain('interrupted by SIGINT');
    // One Ctrl-C stays one: nothing inside sgq may raise it again (when-exit under conf did).
    expect(r.stderr).not.toContain('again');
  });

  it('SIGTERM exits 143', async () => {
    const child = execa(process.execPath, [BIN, 'graph', 'followers', 'term_200000', '--all'], {
      env: { ...sb.env(), SGQ_CONFIG_DIR: tempDir() },
      reject: false,
    });
    child.stdout!.once('data', () => child.kill('SIGTERM'));
    const r = await child;
    expect(r.exitCode).toBe(143);
  });
  it('on a pseudo-terminal that reports no width, an export ends instead of redrawing forever', async () => {
    // `script` gives sgq a pty; with no terminal on its own stdin that pty is 0 columns wide.
    const out = join(tempDir(), 'followers.ndjson');
    const env = { ...sb.env(), SGQ_CONFIG_DIR: tempDir(), NO_COLOR: '1' };
    const command = [process.execPath, BIN, 'graph', 'followers', 'big_2600', '--all', '--out', out].map((a) => `'${a}'`).join(' ');
    const r = await execa('script', ['-qec', command, '/dev/null'], { env, stdin: 'ignore', reject: false, timeout: 20_000, maxBuffer: 1_000_000 });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(0);
    expect(readFileSync(out, 'utf8').split('\n')).toHaveLength(2601);
    expect(r.stdout).toContain('6 pages, 2,600 records');
    expect(r.stdout).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
  });
});
