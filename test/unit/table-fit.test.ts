import { beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/classify.js';
import { parseJson } from '../../src/core/json.js';
import { createFormatter, type FormatOptions } from '../../src/cli/formats/formats.js';
import { displayWidth, loadTextWidth } from '../../src/cli/terminal/text-width.js';
import { relationRecord } from '../../src/sandbox/records.js';
import { captureSink } from '../helpers/sink.js';

// The table a person reads: the route's default columns fitted to a terminal. Numbers, ids,
// handles and dates are never cut: a column is left out first, and that is said once.

/** Follower records as the sandbox serves them (the service's shape): ids past 2^53, names in every script. */
const followers = (n: number, from = 0): JsonObject[] =>
  Array.from({ length: n }, (_, i) => parseJson(relationRecord('followers', 673, from + i, `user_${from + i}`, Date.UTC(2026, 10, 28), i).text) as JsonObject);

async function table(pages: JsonObject[][], options: FormatOptions = {}) {
  const sink = captureSink();
  const warnings: string[] = [];
  const f = await createFormatter('table', sink, { warn: (l) => warnings.push(l), ...options });
  for (const page of pages) await f.write(page, true);
  await f.end();
  return { lines: sink.text.split('\n').slice(0, -1), warnings };
}

const text = (v: unknown) => String(v);
const date = (v: unknown) => String(v).slice(0, 10);

beforeAll(() => loadTextWidth());

describe('-o table: a first screen that reads', () => {
  it('at 80 columns: six columns under short headers, every number, handle and date whole, timestamps as dates', async () => {
    const page = followers(500);
    const { lines, warnings } = await table([page], { width: 80 });
    expect(lines[0]).toMatch(/^username +name +followers +following +posts +created$/);
    expect(lines).toHaveLength(501);
    expect(warnings).toEqual([]);
    page.forEach((r, i) => {
      const line = lines[i + 1]!;
      expect(displayWidth(line)).toBeLessThanOrEqual(80);
      expect(line.startsWith(`${text(r.follower_username)} `)).toBe(true);
      expect(line.endsWith(`  ${date(r.follower_creation_date)}`)).toBe(true);
      // Counts aligned right, each whole, in this order.
      const counts = [r.follower_num_followers, r.follower_num_friends, r.follower_num_tweets].map(text);
      expect(line).toMatch(new RegExp(` ${counts.join(' +')}  `));
      expect(line).not.toContain('T'.concat(String(r.follower_creation_date).slice(11, 13)));
    });
  });

  it('a narrow terminal leaves columns out from the end before a number is cut, and says so once', async () => {
    const { lines, warnings } = await table([followers(50), followers(50, 50)], { width: 42 });
    expect(lines[0]).toMatch(/^username +name +followers +following$/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/posts, created/);
    expect(warnings[0]).toMatch(/--wide|--fields/);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(42);
    for (const line of lines.slice(1)) expect(line).toMatch(/ \d+ +\d+$/);
  });

  it('a longer number on a later page is printed whole; the row stays within the terminal, its text cut instead', async () => {
    const first = followers(20).map((r) => ({ ...r, follower_num_followers: 7 }));
    const later = followers(1, 20).map((r) => ({ ...r, follower_list_name: 'a rather long display name indeed', follower_num_followers: 123456789012 }));
    const { lines } = await table([first, later], { width: 80 });
    const last = lines.at(-1)!;
    expect(last).toContain(' 123456789012 ');
    expect(displayWidth(last)).toBeLessThanOrEqual(80);
    expect(last).toContain('…');
  });

  it('--fields: the columns named; ids and handles whole, text cut to fit', async () => {
    const page = followers(30);
    const fields = ['follower_username', 'follower_userid', 'follower_bio'];
    const projected = page.map((r) => Object.fromEntries(fields.map((f) => [f, r[f] ?? null])) as JsonObject);
    const { lines } = await table([projected], { width: 44, fields });
    // A field name as a header may be cut; the values of a whole column may not.
    expect(lines[0]).toMatch(/^follow\S* +follower_userid +follower_bio/);
    page.forEach((r, i) => expect(lines[i + 1]).toContain(`${text(r.follower_username)} `));
    page.forEach((r, i) => expect(lines[i + 1]).toContain(text(r.follower_userid)));
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(44);
  });

  it('--wide: every field under its own name, nothing cut, also on a terminal', async () => {
    const page = followers(40);
    const { lines, warnings } = await table([page], { width: 80, wide: true });
    expect(lines[0]!.split(/ {2,}/)).toEqual(Object.keys(page[0]!));
    expect(lines.join('\n')).not.toContain('…');
    expect(warnings).toEqual([]);
    page.forEach((r, i) => expect(lines[i + 1]).toContain(text(r.follower_userid)));
  });

  it('a pipe or --out: the same default columns, every cell whole', async () => {
    const page = followers(60);
    const { lines } = await table([page]);
    expect(lines[0]).toMatch(/^username +name +followers +following +posts +created$/);
    expect(lines.join('\n')).not.toContain('…');
    page.forEach((r, i) => expect(lines[i + 1]!.endsWith(date(r.follower_creation_date))).toBe(true));
  });

  it('records of another shape keep every field; a timestamp is a date, any other text as sent', async () => {
    const { lines } = await table([[{ username: 'a', last_checked: '2024-04-07T10:00:00.000001+00:00' }, { username: 'b', last_checked: 'not a time' }]] as never);
    expect(lines).toEqual(['username  last_checked', 'a         2024-04-07', 'b         not a time']);
  });

  it('data formats keep timestamps as sent', async () => {
    const sink = captureSink();
    const f = await createFormatter('ndjson', sink);
    const page = followers(3);
    await f.write(page, true);
    expect(sink.text).toContain(String(page[0]!.follower_creation_date));
  });
});
