// `--full-every` with `--dataset` (issue 37): a night between whole ones adds to the dataset
// only what came since, its records marked with `fetched_since`; `sgq history --dataset` reads
// such a run as the partial snapshot it stands for (the run before with what came since), so
// its points are those `sgq history` reads from the snapshot store of the same nights: the
// same counts, the same upper bounds, the same gains and losses.
import { describe, expect, it } from 'vitest';
import { DEMO_KEY, startSandbox } from '../../src/sandbox/server.js';
import { withDuckDb } from '../helpers/duckdb.js';
import { ndjson, runSgq, tempDir } from '../helpers/run.js';

const DAY = 86_400_000;
const FIRST = Date.parse('2026-11-01T03:15:00Z');
const USER = 'churn_1200';

describe('--full-every 3 --dataset over seven nights of the sandbox churn', () => {
  it('history --dataset gives the points history gives from the snapshots: partial nights an upper bound, losses on whole nights', async () => {
    let now = new Date(FIRST);
    const sandbox = await startSandbox({ churn: 0.03, clock: () => now, ttlMs: 300_000 });
    try {
      const env = { SGQ_BASE_URL: sandbox.url, SGQ_API_KEY: DEMO_KEY, SGQ_CONFIG_DIR: tempDir(), SGQ_RETRIES: '0' };
      const [store, dataset] = [tempDir('sgq-store-'), tempDir('sgq-dataset-')];
      for (let night = 1; night <= 7; night++) {
        now = new Date(FIRST + (night - 1) * DAY);
        const r = await runSgq(['graph', 'followers', USER, '--all', '--snapshot', '--snapshot-dir', store, '--full-every', '3', '--dataset', dataset], { env, now: () => now });
        expect(r.code, r.stderr).toBe(0);
      }
      const history = async (...extra: string[]) => {
        const r = await runSgq(['history', USER, '-o', 'ndjson', ...extra], { env });
        expect(r.code, r.stderr).toBe(0);
        return ndjson(r.stdout);
      };
      const fromSnapshots = await history('--snapshot-dir', store);
      const fromDataset = await history('--dataset', dataset);
      expect(fromSnapshots.map((p) => p.count_is_upper_bound)).toEqual([false, true, true, false, true, true, false]);
      expect(fromDataset).toEqual(fromSnapshots);
      // The nights between whole ones lose nobody; the whole ones after them do (the sandbox's churn loses some every night).
      expect(fromDataset.filter((p) => p.count_is_upper_bound).every((p) => p.lost === 0 && Number(p.gained) > 0)).toBe(true);
      expect(fromDataset[3]!.lost).toBeGreaterThan(0);
      // What the dataset holds of a partial night: what came since, each record with the since it was asked with.
      const rows = await withDuckDb(async (db) => (await db.runAndReadAll(`SELECT fetched_since IS NOT NULL AS partial, count(DISTINCT fetched_at)::INTEGER AS runs, count(DISTINCT fetched_since)::INTEGER AS sinces FROM read_parquet('${dataset}/records/**/*.parquet', hive_partitioning = true, union_by_name = true) GROUP BY ALL ORDER BY partial`)).getRowObjects());
      expect(rows).toEqual([
        { partial: false, runs: 3, sinces: 0 },
        { partial: true, runs: 4, sinces: 4 },
      ]);
    } finally {
      await sandbox.close();
    }
  }, 240_000);
});
