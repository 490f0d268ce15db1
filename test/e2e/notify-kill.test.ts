// --notify delivers at least once: a run killed with SIGKILL after its snapshots committed,
// while its notification is on its way (the receiver holds the POST unanswered), loses
// nothing: the notification was kept before the snapshots committed, and the next run
// delivers it. Against the sandbox's churn (sgq sandbox --churn): two nights differ.
import { execa } from 'execa';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_KEY, startSandbox } from '../../src/sandbox/server.js';
import { BIN, sgq } from '../helpers/e2e.js';
import { ndjson, tempDir } from '../helpers/run.js';
import { useStubs } from '../helpers/stub-server.js';
import { until } from '../helpers/wait.js';

const stubs = useStubs();
const DAY = 86_400_000;
const NIGHT = Date.parse('2026-11-01T03:15:00Z');

describe('--notify across a kill -9', () => {
  it('killed between the snapshot commit and the answer to its post: the next run delivers the notification', async () => {
    let now = new Date(NIGHT);
    const sandbox = await startSandbox({ churn: 0.05, clock: () => now, ttlMs: 120_000 });
    // The first POST is never answered: the run is killed while it waits. Then 200.
    const to = await stubs((_req, n) => (n === 1 ? 'hang' : { body: { ok: true } }));
    const data = tempDir('sgq-data-');
    const env = { SGQ_BASE_URL: sandbox.url, SGQ_API_KEY: DEMO_KEY, XDG_DATA_HOME: data, SGQ_CONFIG_DIR: tempDir(), SGQ_NOTIFY: `${to.url}/hook/secret-token` };
    const args = ['graph', 'followers', 'jack', '--all', '--snapshot', '--quiet'];
    const outbox = join(data, 'sgq', 'snapshots', '@sandbox', 'default', '.notify');
    const kept = () => readdirSync(outbox).filter((n) => n.endsWith('.json'));
    try {
      expect((await sgq(args, { env })).exitCode).toBe(0);
      now = new Date(NIGHT + DAY);
      const child = execa(process.execPath, [BIN, ...args], { env, reject: false });
      await until(() => to.requests.length === 1, 'the notification to be posted');
      child.kill('SIGKILL');
      expect((await child).signal).toBe('SIGKILL');
      // The snapshot was committed before the post; the notification was kept before the snapshot.
      const list = ndjson((await sgq(['snapshots', 'list', 'jack', '-o', 'ndjson'], { env })).stdout);
      expect(list).toHaveLength(2);
      expect(kept()).toHaveLength(1);

      // The same night again: no changes of its own, so the one POST is the kept notification.
      const next = await sgq(args, { env });
      expect(next.exitCode, next.stderr).toBe(0);
      expect(to.requests).toHaveLength(2);
      expect(to.requests[1]!.body).toBe(to.requests[0]!.body);
      const body = JSON.parse(to.requests[1]!.body) as { text: string; changes: { counts: { gained: number; lost: number } }[] };
      expect(body.text).toMatch(/^sgq graph followers: jack \d+ gained, \d+ lost$/);
      expect(body.changes[0]!.counts.gained + body.changes[0]!.counts.lost).toBeGreaterThan(0);
      expect(kept()).toEqual([]);
      // Once: a later run has nothing kept to send.
      expect((await sgq(args, { env })).exitCode).toBe(0);
      expect(to.requests).toHaveLength(2);
    } finally {
      await sandbox.close();
    }
  }, 90_000);
});
