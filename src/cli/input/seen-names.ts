import { KeyTable, SET_STRIDE } from '../../core/key-table.js';

/**
 * An exact set of names for skipping duplicates in a long list, kept outside the JS heap in
 * sgq's one table of keys as bytes (src/core/key-table.ts, a set of 16 bytes a slot):
 * each name's characters a byte each when all are below U+0100, as user names are, two
 * otherwise. A Set<string> of a million names of a dozen characters cost some 100 MiB of
 * resident memory, half of the budget of a million-user run.
 */
export class SeenNames {
  /** The first name alone, until a second comes: most runs name one user and need no table. */
  private first: string | undefined;
  private table: KeyTable | undefined;
  /** The name being looked up, as bytes (the table copies the new ones). */
  private scratch = Buffer.alloc(0);

  /** Adds `name`; false when it was already there. */
  add(name: string): boolean {
    if (this.table === undefined) {
      if (this.first === undefined) {
        this.first = name;
        return true;
      }
      if (name === this.first) return false;
      this.table = new KeyTable(1024, SET_STRIDE);
      this.scratch = Buffer.allocUnsafe(256);
      this.put(this.table, this.first);
    }
    return this.put(this.table, name);
  }

  private put(table: KeyTable, name: string): boolean {
    const wide = hasWideCharacters(name);
    const length = wide ? name.length * 2 : name.length;
    if (length > this.scratch.length) this.scratch = Buffer.allocUnsafe(2 * length);
    this.scratch.write(name, 0, wide ? 'utf16le' : 'latin1');
    // A name of two-byte characters hashes apart from one whose one-byte characters are the
    // same bytes: the table takes a key for another only when their hashes agree too.
    const bytesHash = fnv1a(this.scratch, 0, length);
    const hash = wide ? ~bytesHash : bytesHash;
    const found = table.find(this.scratch, 0, length, hash);
    if (found >= 0) return false;
    table.put(found, this.scratch, 0, length, hash, 0, 0, 1);
    return true;
  }
}

function hasWideCharacters(name: string): boolean {
  for (let i = 0; i < name.length; i++) if (name.charCodeAt(i) > 0xff) return true;
  return false;
}

/** 32-bit FNV-1a over bytes [from, to) of `buffer`, as the table's Int32Array holds it (the empty name's too). */
function fnv1a(buffer: Buffer, from: number, to: number): number {
  let hash = 0x811c9dc5 | 0;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ buffer[i]!, 0x01000193);
  return hash;
}
