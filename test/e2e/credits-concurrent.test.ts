import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_KEY } from '../../src/sandbox/server.js';
import { readBalance } from '../../src/cli/run/credits-store.js';
import { SANDBOX_SERVICE } from '../../src/core/service.js';
import { sgq, useSandboxProcess } from '../helpers/e2e.js';
import { tempDir } from '../helpers/run.js';

// The balance notes have no lock: runs of different profiles (and services) write different
// files (credits-store.ts), where they all wrote credits.json and one's rename could undo
// another's note. Real processes, started together, so that their notes are written within a
// millisecond or so of each other (before 3.4, about one round in 15 lost a note on a busy machine).

const sb = useSandboxProcess();
const PROFILES = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
const ROUNDS = Number(process.env.SGQ_TEST_CREDITS_ROUNDS ?? 5);

describe('credits.json written by runs of several profiles at once', () => {
  it(`keeps every profile's note (${PROFILES.length} runs at once, ${ROUNDS} times)`, async () => {
    const lost: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const dir = tempDir();
      const profiles = Object.fromEntries(PROFILES.map((p) => [p, { 'base-url': sb.url, 'api-key': DEMO_KEY }]));
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles }));
      // A note of sgq before 3.4, of a profile that does not run now: it must stay too.
      const legacy = JSON.stringify({ profiles: { idle: { credits: 1, seen_at: '2026-01-01T00:00:00.000Z', route: 'graph/get_followers', base_url: sb.url } } });
      writeFileSync(join(dir, 'credits.json'), legacy);
      const runs = await Promise.all(PROFILES.map((p) => sgq(['--profile', p, 'graph', 'followers', 'jack', '--limit', '1'], { env: { SGQ_CONFIG_DIR: dir } })));
      expect(runs.map((r) => r.exitCode)).toEqual(PROFILES.map(() => 0));
      const config = join(dir, 'config.json');
      lost.push(...PROFILES.filter((profile) => readBalance(config, { service: SANDBOX_SERVICE, profile }) === undefined).map((p) => `round ${round}: ${p}`));
      if (readFileSync(join(dir, 'credits.json'), 'utf8') !== legacy) lost.push(`round ${round}: idle`);
    }
    expect(lost).toEqual([]);
  }, 300_000);
});
