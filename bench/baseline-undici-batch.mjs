// Baseline for the big-batch figure: the smallest honest script a Node user would write instead of
// `sgq metadata userid - --concurrency N -o ndjson --quiet`. Users read from stdin a line at a
// time, N calls in flight over one keep-alive pool of N connections, each record written as one
// NDJSON line tagged with its user as sgq tags it, honouring stdout backpressure. The same POST
// sgq sends (a free route: no key). No retries, no checks, no skipping of duplicate users.
// Usage: SGQ_BASE_URL=… node bench/baseline-undici-batch.mjs N < users.txt
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';

const n = Number(process.argv[2]);
const base = new URL(process.env.SGQ_BASE_URL);
const pool = new Pool(base.origin, { connections: n });
const path = `${base.pathname.replace(/\/+$/, '')}/api/metadata/get_userid`;
const headers = { 'content-type': 'application/json' };
// One line iterator shared by the N workers: each takes the next user when it is free.
const users = createInterface({ input: process.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]();

async function worker() {
  for (let next = await users.next(); !next.done; next = await users.next()) {
    const user = next.value.trim();
    if (!user) continue;
    const res = await pool.request({ method: 'POST', path, headers, body: JSON.stringify({ user, how: 'username' }) });
    const body = JSON.parse(await res.body.text());
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode} for ${user}`);
    let out = '';
    for (const record of body.data) out += JSON.stringify({ query_user: user, ...record }) + '\n';
    if (!process.stdout.write(out)) await once(process.stdout, 'drain');
  }
}

await Promise.all(Array.from({ length: n }, worker));
await pool.close();
