import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope, useStubs } from '../helpers/stub-server.js';
import { tempDir } from '../helpers/run.js';
import { sgq } from '../helpers/e2e.js';

const stubs = useStubs();

describe('--cache shared by runs at once', () => {
  it('runs writing the same entries at the same time never leave or read half of one', async () => {
    // Pages large enough that a write is not one small syscall.
    const stub = await stubs((req) => {
      const page = (JSON.parse(req.body) as { page: number }).page;
      const data = Array.from({ length: 500 }, (_, i) => ({ username: `u${page}_${i}`, note: 'x'.repeat(200) }));
      return { body: envelope(page, page < 4 ? page + 1 : null, data) };
    });
    const cache = tempDir();
    const env = { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'secret-key-123456', XDG_CACHE_HOME: cache };
    const argv = ['graph', 'followers', 'jack', '--all', '--cache', '1h'];
    const runs = await Promise.all(Array.from({ length: 4 }, () => sgq(argv, { env })));
    for (const r of runs) {
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(runs[0]!.stdout);
    }
    // The answers, and nothing half-written; the folder also holds sgq's compiled code (code/).
    expect(readdirSync(join(cache, 'sgq')).filter((name) => name !== 'code').sort()).toHaveLength(4);
    const sent = stub.requests.length;
    const again = await sgq(argv, { env });
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toBe(runs[0]!.stdout);
    expect(stub.requests).toHaveLength(sent);
  });
});
