// The sandbox itself, over HTTP as a client of the service meets it: both record shapes,
// deterministic from the account name, ids and decimals as raw tokens, `how=userid`, what it
// charges, and the envelopes its paging faults bend.
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/core/routes.js';
import { relationFields } from '../../src/sandbox/records.js';
import { DEMO_KEY } from '../../src/sandbox/server.js';
import type { PagingKind } from '../../src/sandbox/fault-kinds.js';
import { useSandbox } from '../helpers/sandbox.js';

const service = useSandbox();
const spec = useSandbox({ shape: 'spec' });

interface Body {
  page: number | null;
  next_page: number | null;
  page_items: number | null;
  how: string;
  data: Record<string, unknown>[];
  current_credits: number;
}

async function post(url: string, path: string, payload: Record<string, unknown>, key = DEMO_KEY): Promise<{ text: string; body: Body }> {
  const res = await fetch(`${url}/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(payload) });
  const text = await res.text();
  return { text, body: JSON.parse(text) as Body };
}

const followers = (url: string, user: string, page = 1, extra: Record<string, unknown> = {}) => post(url, 'graph/get_followers', { user, how: 'username', page, ...extra });

describe('records in the service\'s shape', () => {
  it('followers carry the prefixed fields, following the same names unprefixed', async () => {
    const f = await followers(service.sandbox.url, 'shape_5');
    for (const record of f.body.data) expect(Object.keys(record)).toEqual(relationFields('followers'));
    const g = await post(service.sandbox.url, 'graph/get_following', { user: 'shape_5', how: 'username', page: 1 });
    for (const record of g.body.data) expect(Object.keys(record)).toEqual(relationFields('following'));
    expect(relationFields('following')).toEqual(relationFields('followers').map((f) => f.replace(/^follower_/, '')));
  });

  it('ids are bare integers, most past 2^53; the same account name gives the same bytes', async () => {
    const a = await followers(service.sandbox.url, 'same_1200', 2);
    const b = await followers(service.sandbox.url, 'same_1200', 2);
    // Compared without the balance, which the first call lowered; not by toBe, whose diff of 230 kB would drown the log.
    const unbilled = (text: string) => text.replace(/"current_credits":\d+/, '');
    expect(unbilled(a.text) === unbilled(b.text)).toBe(true);
    const ids = [...a.text.matchAll(/"follower_userid":(\d+)[,}]/g)].map((m) => BigInt(m[1]!));
    expect(ids).toHaveLength(500);
    expect(new Set(ids).size).toBe(500);
    expect(ids.filter((id) => id > BigInt(Number.MAX_SAFE_INTEGER)).length).toBeGreaterThan(400);
    expect(ids.every((id) => id < 2n ** 63n)).toBe(true);
  });

  it('spec shape: the two fields of the spec\'s example, the same handles and timestamps', async () => {
    const s = await followers(spec.sandbox.url, 'same_3');
    const v = await followers(service.sandbox.url, 'same_3');
    expect(s.body.data.map((r) => Object.keys(r))).toEqual(Array(3).fill(['username', 'last_checked']));
    expect(v.body.data.map((r) => [r.follower_username, r.follower_last_checked])).toEqual(s.body.data.map((r) => [r.username, r.last_checked]));
  });

  it('score history: long decimals and Python\'s 1.0 as tokens in the service\'s shape, plain numbers in the spec\'s', async () => {
    const v = await post(service.sandbox.url, 'alpha/get_score_history', { user: 'jack', how: 'username', page: 1 });
    expect(v.text).toMatch(/"score":\d+\.12345678901234567890123\}/);
    expect(v.text).toMatch(/"score":\d+\.0\}/);
    expect(v.body.data).toHaveLength(100);
    const s = await post(spec.sandbox.url, 'alpha/get_score_history', { user: 'jack', how: 'username', page: 1 });
    expect(s.text).not.toContain('12345678901234567890123');
  });

  it('how=userid serves numeric ids, as public clients send them; anything else has no data', async () => {
    const ok = await followers(service.sandbox.url, '1234567890123456789', 1, { how: 'userid' });
    expect(ok.body.how).toBe('userid');
    expect(ok.body.data.length).toBeGreaterThan(0);
    const bad = await followers(service.sandbox.url, 'jack', 1, { how: 'userid' });
    expect(bad.body.data).toEqual([{ error: 'no data for userid = jack' }]);
  });
});

describe('credits', () => {
  it('charges the route table\'s price for answers with data, nothing for error records, since errors and placeholders', async () => {
    const url = service.sandbox.url;
    const price = (path: string) => ROUTES.find((r) => r.path === path)!.cost ?? 1;
    const start = (await followers(url, 'credit_3')).body.current_credits;
    const after = (await followers(url, 'credit_3')).body.current_credits;
    expect(start - after).toBe(price('graph/get_followers'));
    expect((await followers(url, 'nobody')).body.current_credits).toBe(after);
    expect((await followers(url, 'credit_3', 1, { since: 'yesterday' })).body.current_credits).toBe(after);
    const placeholder = await post(url, 'lists/get_list_members', { list_id: '1' });
    expect(placeholder.body).toEqual({ message: expect.any(String) });
    const latest = await post(url, 'metadata/get_latest_tweets', { user: 'credit_3', how: 'username' });
    expect(after - latest.body.current_credits).toBe(price('metadata/get_latest_tweets'));
  });
});

describe('paging faults', () => {
  const kinds: PagingKind[] = ['page-back', 'page-repeat', 'page-empty', 'page-ignored', 'page-items'];
  const boxes = Object.fromEntries(kinds.map((kind) => [kind, useSandbox({ shape: 'spec', faults: { malformed: kind } })]));
  const pages = async (kind: PagingKind, user: string) => [await followers(boxes[kind]!.sandbox.url, user, 1), await followers(boxes[kind]!.sandbox.url, user, 2)].map((r) => r.body);

  it('page 1 is sound, page 2 bent as each kind says', async () => {
    const sound = (await followers(spec.sandbox.url, 'pf_1200', 1)).body;
    const [backOne, back] = await pages('page-back', 'pf_1200');
    expect({ ...backOne, current_credits: 0 }).toEqual({ ...sound, current_credits: 0 });
    expect(back!.next_page).toBe(1);
    expect((await pages('page-repeat', 'pf_1200'))[1]!.next_page).toBe(2);
    const [, empty] = await pages('page-empty', 'pf_1200');
    expect([empty!.data, empty!.page_items, empty!.next_page]).toEqual([[], 0, 3]);
    const emptyFar = (await followers(boxes['page-empty']!.sandbox.url, 'pf_1200', 9)).body;
    expect(emptyFar.next_page, 'an empty page names a next one without end').toBe(10);
    const [, ignored] = await pages('page-ignored', 'pf_1200');
    expect([ignored!.page, ignored!.next_page, ignored!.data]).toEqual([2, 3, sound.data]);
    const [itemsOne, itemsTwo] = await pages('page-items', 'pf_1200');
    expect([itemsOne!.page_items, itemsTwo!.page_items]).toEqual([501, 501]);
  });
});
