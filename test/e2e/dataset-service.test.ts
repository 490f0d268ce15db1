import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runSgq, tempDir } from '../helpers/run.js';
import { useSandbox } from '../helpers/sandbox.js';
import { envelope, useStubs } from '../helpers/stub-server.js';

// A dataset belongs to the service whose records it holds: a run of another service (sgq's
// sandbox beside the real service, or a profile pointed elsewhere) is refused before any
// request, with exit 2 and one line naming both services.

const sb = useSandbox();
const stubs = useStubs();

/** A stand-in for a real service (not sgq's sandbox): two followers a call. */
async function realService() {
  return stubs((req) => {
    if (req.method === 'GET') return { status: 404, body: {} };
    const { user, page } = JSON.parse(req.body) as { user: string; page: number };
    return { body: envelope(page, null, [{ follower_username: 'amy', follower_userid: 1 }, { follower_username: 'bob', follower_userid: 2 }], 1000, user) };
  });
}

/** The Parquet files of a dataset, wherever they are. */
const parts = (dir: string): string[] => (existsSync(join(dir, 'records')) ? (readdirSync(join(dir, 'records'), { recursive: true }) as string[]).filter((name) => name.endsWith('.parquet')).sort() : []);
const claim = (dir: string) => JSON.parse(readFileSync(join(dir, 'sgq-dataset.json'), 'utf8')) as { service: string };
const posts = (stub: { requests: { method: string }[] }) => stub.requests.filter((r) => r.method === 'POST').length;
const sandboxCalls = () => [...sb.sandbox.calls.values()].reduce((a, b) => a + b, 0);

const follow = (dir: string, env: Record<string, string>) => runSgq(['graph', 'followers', 'jack', '--all', '--dataset', dir, '-q'], { env: { ...env, SGQ_RETRIES: '0' } });

describe('a dataset records the service it belongs to', () => {
  it('a brand-new dataset is claimed by its first run (the sandbox); a real service\'s run is then refused before any request (exit 2)', async () => {
    const dir = tempDir('sgq-dataset-');
    const first = await follow(dir, sb.env());
    expect(first.code, first.stderr).toBe(0);
    expect(claim(dir).service).toBe('sandbox');
    const before = parts(dir);
    expect(before).toHaveLength(1);
    const real = await realService();
    const refused = await follow(dir, { SGQ_BASE_URL: real.url, SGQ_API_KEY: 'k' });
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain(`the dataset ${dir} holds records of sgq's sandbox; this run's come from ${real.url}`);
    expect(refused.stderr).toMatch(/another dataset folder/);
    expect(posts(real)).toBe(0);
    expect(parts(dir)).toEqual(before);
  });

  it("a sandbox run is refused by a real service's dataset: exit 2, nothing appended, no request sent", async () => {
    const dir = tempDir('sgq-dataset-');
    const real = await realService();
    const first = await follow(dir, { SGQ_BASE_URL: real.url, SGQ_API_KEY: 'k' });
    expect(first.code, first.stderr).toBe(0);
    expect(claim(dir).service).toBe(real.url);
    const before = parts(dir);
    const calls = sandboxCalls();
    const refused = await follow(dir, sb.env());
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain(`the dataset ${dir} holds records of ${real.url}; this run's come from sgq's sandbox`);
    expect(sandboxCalls()).toBe(calls);
    expect(parts(dir)).toEqual(before);
    // --sandbox (sgq's own sandbox in the process) is the same service: refused too.
    const flagged = await runSgq(['graph', 'followers', 'jack', '--sandbox', '--dataset', dir, '-q']);
    expect(flagged.code).toBe(2);
    expect(parts(dir)).toEqual(before);
    // The same service appends.
    const again = await follow(dir, { SGQ_BASE_URL: `${real.url}/api/`, SGQ_API_KEY: 'k' });
    expect(again.code, again.stderr).toBe(0);
    expect(parts(dir)).toHaveLength(2);
  });

  it('a dataset of sgq 3.x (files, no service recorded) is refused by the sandbox and adopted by the first run of a real service', async () => {
    const dir = tempDir('sgq-dataset-');
    mkdirSync(join(dir, '.sgq', 'staging'), { recursive: true });
    cpSync(fileURLToPath(new URL('../fixtures/dataset-3.4.1/records', import.meta.url)), join(dir, '.sgq', 'records', 'v1'), { recursive: true });
    symlinkSync(join('.sgq', 'records', 'v1'), join(dir, 'records'));
    const before = parts(dir);
    const calls = sandboxCalls();
    const refused = await follow(dir, sb.env());
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain(`the dataset ${dir} holds records of sgq 3.x, from the service its profile used; this run's come from sgq's sandbox`);
    expect(existsSync(join(dir, 'sgq-dataset.json'))).toBe(false);
    expect(sandboxCalls()).toBe(calls);
    expect(parts(dir)).toEqual(before);
    const real = await realService();
    const adopted = await runSgq(['graph', 'followers', 'jack', '--all', '--dataset', dir], { env: { SGQ_BASE_URL: real.url, SGQ_API_KEY: 'k', SGQ_RETRIES: '0' } });
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(adopted.stderr).toContain(`sgq: the dataset ${dir} (written by sgq 3.x) now belongs to ${real.url}`);
    expect(claim(dir).service).toBe(real.url);
    expect(parts(dir)).toHaveLength(before.length + 1);
    // dataset info says whose records they are.
    const info = await runSgq(['dataset', 'info', dir, '-o', 'json']);
    expect(info.code, info.stderr).toBe(0);
    expect(info.stderr).toContain(`sgq: the dataset ${dir} holds records of ${real.url}`);
  });
});
