// Baseline for the one-shot figure: the smallest script that makes the call `sgq graph followers
// USER -q` makes (one page, one POST, node:http) and prints the same NDJSON. No retries, no checks.
// Usage: SGQ_BASE_URL=… SGQ_API_KEY=… node bench/baseline-http.mjs USER
import { request } from 'node:http';

const base = new URL(process.env.SGQ_BASE_URL);
const body = JSON.stringify({ user: process.argv[2], how: 'username', page: 1 });
const req = request(new URL(`${base.pathname.replace(/\/+$/, '')}/api/graph/get_followers`, base), {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': process.env.SGQ_API_KEY },
});
req.on('response', (res) => {
  let text = '';
  res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
  res.on('end', () => {
    let out = '';
    for (const record of JSON.parse(text).data) out += JSON.stringify(record) + '\n';
    process.stdout.write(out);
  });
});
req.end(body);
