import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';
import { alive, until } from '../helpers/wait.js';

describe('sgq sandbox for shells', () => {
  it('--detach: eval "$(sgq sandbox --detach)" returns while it serves; kill "$SGQ_SANDBOX_PID" stops it', async () => {
    const script = `
      set -e
      eval "$(node "$BIN" sandbox --detach --quiet)"
      node "$BIN" graph followers jack_3 --quiet | wc -l
      echo "pid=$SGQ_SANDBOX_PID"
      kill "$SGQ_SANDBOX_PID"`;
    const r = await execa('bash', ['-c', script], { env: { BIN, SGQ_CONFIG_DIR: tempDir() }, timeout: 60_000 });
    const [count, pidLine] = r.stdout.trim().split('\n');
    expect(count!.trim()).toBe('3');
    const pid = Number(/pid=(\d+)/.exec(pidLine!)![1]);
    await until(() => !alive(pid), 'the detached sandbox to stop');
    expect(r.stderr).toBe('');
  }, 60_000);

  it('--shape spec serves the spec\'s two-field records, also from a detached sandbox; the default is the service\'s shape', async () => {
    const script = `
      set -e
      eval "$(node "$BIN" sandbox --detach --quiet --shape spec)"
      node "$BIN" graph followers jack_1 --quiet
      kill "$SGQ_SANDBOX_PID"
      eval "$(node "$BIN" sandbox --detach --quiet)"
      node "$BIN" graph followers jack_1 --quiet
      kill "$SGQ_SANDBOX_PID"`;
    const r = await execa('bash', ['-c', script], { env: { BIN, SGQ_CONFIG_DIR: tempDir() }, timeout: 60_000 });
    const [spec, service] = r.stdout.trim().split('\n').map((l) => Object.keys(JSON.parse(l) as object));
    expect(spec).toEqual(['username', 'last_checked']);
    expect(service![0]).toBe('follower_username');
    expect(service).toHaveLength(12);
  }, 60_000);

  it('prints export lines a shell can source as they are, and a port in use is one line (exit 2)', async () => {
    const first = await execa(process.execPath, [BIN, 'sandbox', '--detach', '--ttl', '60'], { env: { SGQ_CONFIG_DIR: tempDir() } });
    const lines = first.stdout.split('\n');
    expect(lines[0]).toMatch(/^export SGQ_BASE_URL=http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines[1]).toBe('export SGQ_API_KEY=sgq-demo-key');
    expect(lines[2]).toMatch(/^export SGQ_SANDBOX_PID=\d+$/);
    const pid = Number(lines[2]!.split('=')[1]);
    const port = /:(\d+)$/.exec(lines[0]!)![1]!;
    try {
      const busy = await execa(process.execPath, [BIN, 'sandbox', '--detach', '--port', port], { env: { SGQ_CONFIG_DIR: tempDir() }, reject: false });
      expect(busy.exitCode).toBe(2);
      expect(busy.stderr.trim().split('\n')).toHaveLength(1);
      expect(busy.stderr).toMatch(/port is in use/);
      expect(busy.stdout).toBe('');
    } finally {
      process.kill(pid, 'SIGTERM');
    }
    await until(() => !alive(pid), 'the detached sandbox to stop');
  }, 60_000);
});
