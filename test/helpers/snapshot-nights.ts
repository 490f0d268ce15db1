import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

// A snapshot store written as sgq writes one (gzip NDJSON sorted by the id as text, metadata
// with its commit order), for a given service, user and nights: what a year of nightly
// `--snapshot` runs leaves, without a year of runs. The metadata carries no counts, as an
// older sgq's did: `sgq history` counts them once.

export interface Account {
  id: number;
  name: string;
  listName?: string;
  bio?: string;
  followers?: number;
}

/** Writes one snapshot per night (the list of each, taken at 03:15 UTC from `first` on) under STORE/@SERVICE/default/…/USER. */
export function writeNights(store: string, user: string, nights: readonly (readonly Account[])[], options: { service?: string; first?: Date } = {}): string {
  const folder = join(store, `@${options.service ?? 'sandbox'}`, 'default', 'graph.get_followers', 'username', user);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const first = options.first ?? new Date(Date.UTC(2026, 0, 1, 3, 15));
  nights.forEach((accounts, i) => {
    const takenAt = new Date(first.getTime() + i * 86_400_000).toISOString();
    const sorted = [...accounts].sort((a, b) => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0));
    const lines = sorted.map((a) =>
      JSON.stringify({ follower_username: a.name, follower_userid: a.id, follower_list_name: a.listName ?? `Name of ${a.name}`, follower_bio: a.bio ?? `bio of ${a.name}`, follower_num_followers: a.followers ?? a.id }),
    );
    const base = `${takenAt.replaceAll(':', '-')}-n${String(i).padStart(4, '0')}`;
    writeFileSync(join(folder, `${base}.ndjson.gz`), gzipSync(lines.length ? `${lines.join('\n')}\n` : '', { level: 1 }), { mode: 0o600 });
    const meta = { version: 1, profile: 'default', route: 'graph/get_followers', how: 'username', user, taken_at: takenAt, complete: true, pages: 1, records: sorted.length, credits_used: 1, sorted_by: 'follower_userid', identity: 'id', file: `${base}.ndjson.gz`, seq: i + 1 };
    writeFileSync(join(folder, `${base}.json`), JSON.stringify(meta, null, 2), { mode: 0o600 });
  });
  return folder;
}

/** Nights of a list that grows and churns: about `size` accounts, some coming and some going each night, deterministically. */
export function churningNights(count: number, size: number): Account[][] {
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const members = new Set(Array.from({ length: size }, (_, i) => i + 1));
  let next = size + 1;
  const nights: Account[][] = [];
  for (let n = 0; n < count; n++) {
    if (n > 0) {
      const list = [...members];
      for (let k = Math.floor(random() * size * 0.02); k > 0; k--) members.delete(list[Math.floor(random() * list.length)]!);
      for (let k = Math.floor(random() * size * 0.03); k > 0; k--) members.add(next++);
    }
    nights.push([...members].map((id) => ({ id, name: `u${id}` })));
  }
  return nights;
}
