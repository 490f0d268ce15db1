// Baseline for the export figure: the smallest honest script a Node user would write instead of
// sgq. One keep-alive connection pool, pages fetched in order until next_page is null, each
// record written as one NDJSON line, honouring stdout backpressure. No retries, no checks.
// Usage: SGQ_BASE_URL=… SGQ_API_KEY=… node bench/baseline-undici.mjs USER
import { once } from 'node:events';
import { Pool } from 'undici';

const user = process.argv[2];
const base = new URL(process.env.SGQ_BASE_URL);
const pool = new Pool(base.origin, { connections: 1 });
const path = `${base.pathname.replace(/\/+$/, '')}/api/graph/get_followers`;
const headers = { 'content-type': 'application/json', 'x-api-key': process.env.SGQ_API_KEY };

let page = 1;
while (page !== null) {
  const res = await pool.request({ method: 'POST', path, headers, body: JSON.stringify({ user, how: 'username', page }) });
  const body = JSON.parse(await res.body.text());
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode} on page ${page}`);
  let out = '';
  for (const record of body.data) out += JSON.stringify(record) + '\n';
  if (!process.stdout.write(out)) await once(process.stdout, 'drain');
  page = body.next_page;
}
await pool.close();
