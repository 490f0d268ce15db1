import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { pageJson } from '../helpers/hostile-text.js';
import { runSgq, tempDir } from '../helpers/run.js';
import { useStubs } from '../helpers/stub-server.js';

// Where a table is cut to a width and where sgq's marks are coloured: a terminal's stdout only.
const stubs = useStubs();
const BIO = '東京都渋谷区 神南一丁目 の とても 長い 自己紹介 👨‍👩‍👧‍👦 and\ta tab';
const page = pageJson(JSON.stringify([{ follower_username: '山田太郎', follower_list_name: null, follower_bio: BIO }, { follower_username: 'null', follower_list_name: 'null', follower_bio: 'short' }]), 2);
const terminal = (columns: number) => Object.assign(new PassThrough(), { columns });
// Every field of these records (the default columns would leave the bio out).
const args = ['graph', 'followers', 'jack', '-o', 'table', '--quiet', '--fields', 'follower_username,follower_list_name,follower_bio'];

async function table(options: { tty: boolean; env?: Record<string, string>; out?: string }) {
  const stub = await stubs(() => ({ text: page }));
  const r = await runSgq(options.out ? [...args, '--out', options.out] : args, {
    env: { SGQ_BASE_URL: stub.url, SGQ_API_KEY: 'k', XDG_CACHE_HOME: tempDir(), TERM: 'xterm-256color', ...options.env },
    stdoutIsTTY: options.tty,
    stdout: options.tty ? terminal(40) : undefined,
  });
  expect(r.code, r.stderr).toBe(0);
  return options.out ? readFileSync(options.out, 'utf8') : r.stdout;
}

describe('-o table: width and colour belong to a terminal', () => {
  it('on a terminal: cut to its width, a null faint, the string "null" and the escapes apart', async () => {
    const text = await table({ tty: true });
    expect(text).toContain('…');
    expect(text).toMatch(/^山田太郎 +\u001b\[2mnull\u001b\[22m +東京都渋谷区[^\n]*…$/m);
    expect(text).toMatch(/^null +null +short$/m);
    for (const line of text.split('\n')) expect(line.replace(/\u001b\[2?2m/g, '').length).toBeLessThanOrEqual(40);
  });

  it('NO_COLOR: no colour, a null is an empty cell', async () => {
    const text = await table({ tty: true, env: { NO_COLOR: '1' } });
    expect(text).not.toContain('\u001b');
    expect(text).toMatch(/^山田太郎 +東京/m);
  });

  it('--out FILE and a pipe: every cell whole, no colour, whatever the terminal', async () => {
    const out = join(tempDir(), 'table.txt');
    for (const text of [await table({ tty: true, out }), await table({ tty: false })]) {
      expect(text).toContain(BIO.replace('\t', '\\t'));
      expect(text).not.toContain('\u001b');
      expect(text).not.toContain('…');
    }
  });
});
