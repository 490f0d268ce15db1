import { sameBytes } from './bytes.js';

// sgq's one hash table of keys held as bytes: the hash diff's (src/core/diff/hash-diff.ts), and
// the names a long list of users skips as duplicates (the CLI's SeenNames, a set over it). It
// lives at the core's root, beside neither user, because both layers use it. Open addressing over one Int32Array,
// so that a million keys cost no object each, nothing for the garbage collector to trace, and
// no string. Each slot holds all it knows (hash, mark, where the key and its record are) in
// 24 bytes: a lookup touches one slot and the key's bytes, where a table of separate arrays
// per field missed the cache once per field (the profile: a join's probe at ~260 ns a record).
// Keys are compared byte for byte whenever their hashes agree: a collision of hashes costs a
// comparison, never a wrong match.

/** Int32s a slot: its index in `cells` is a multiple of this. */
export const STRIDE = 6;
/** Int32s a slot of a table that keeps no numbers with its keys (a set): 16 bytes a slot, not 24. */
export const SET_STRIDE = 4;
/** A slot's fields, at its index plus these. */
const HASH = 0;
/** 0: an empty slot; the owner's marks are 1 to 127; OWN is added for a key in the table's arena. */
export const MARK = 1;
/** Where the key's bytes are: in the home buffer given to `reset` for a key put from it. */
export const KEY_AT = 2;
export const KEY_LENGTH = 3;
/** Two numbers the owner keeps with a key (where its record is). */
export const FIRST = 4;
export const SECOND = 5;
/** In the mark's field: the key's bytes are in the table's own arena, not in its home buffer. */
const OWN = 128;
/** A slot's mark, without OWN. */
export const markOf = (cells: Int32Array, at: number) => cells[at + MARK]! & (OWN - 1);
/** Sets a used slot's mark, keeping OWN. */
export const setMark = (cells: Int32Array, at: number, mark: number) => (cells[at + MARK] = (cells[at + MARK]! & OWN) | mark);

export class KeyTable {
  /** The slots, STRIDE Int32s each; at most three quarters of them used. */
  cells: Int32Array;
  private mask: number;
  size = 0;
  /** Where the keys added with `home` are (the older side's records of a partition). */
  private home: Buffer = Buffer.alloc(0);
  /** Keys copied into the table. */
  private arena: Buffer = Buffer.allocUnsafe(64 * 1024);
  private arenaUsed = 0;

  /** Sized for `expected` keys (it grows past them): growing makes garbage, sizing once does not. `stride`: STRIDE, or SET_STRIDE for a set. */
  constructor(
    expected = 1024,
    private readonly stride = STRIDE,
  ) {
    this.cells = new Int32Array(slotsFor(expected) * stride);
    this.mask = this.cells.length / stride - 1;
  }

  /** Empties the table for `expected` keys living in `home`, keeping its array when it is large enough: one table serves every partition. */
  reset(expected: number, home: Buffer): void {
    this.size = 0;
    this.arenaUsed = 0;
    this.home = home;
    if (slotsFor(expected) * this.stride > this.cells.length) this.cells = new Int32Array(slotsFor(expected) * this.stride);
    else this.cells.fill(0);
    this.mask = this.cells.length / this.stride - 1;
  }

  /**
   * The slot (an index into `cells`) holding this key; when there is none, the bitwise
   * complement (negative) of the empty slot where `put` would add it.
   */
  find(buf: Buffer, start: number, end: number, hash: number): number {
    const { cells, stride } = this;
    const length = end - start;
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const at = slot * stride;
      if (cells[at + MARK] === 0) return ~at;
      if (cells[at + HASH] === hash && cells[at + KEY_LENGTH] === length && sameBytes(cells[at + MARK]! & OWN ? this.arena : this.home, cells[at + KEY_AT]!, buf, start, length)) return at;
    }
  }

  /**
   * Adds a key at the empty slot `~find(...)` gave, with `first`, `second` and `mark` (1
   * to 127). The key stays where it is when `buf` is the home buffer, and is copied otherwise.
   * Returns the key's slot (the table may have grown).
   */
  put(empty: number, buf: Buffer, start: number, end: number, hash: number, first: number, second: number, mark: number): number {
    const { cells } = this;
    const at = ~empty;
    const own = buf !== this.home;
    cells[at + HASH] = hash;
    cells[at + MARK] = own ? mark | OWN : mark;
    cells[at + KEY_AT] = own ? this.keep(buf, start, end) : start;
    cells[at + KEY_LENGTH] = end - start;
    if (this.stride === STRIDE) {
      cells[at + FIRST] = first;
      cells[at + SECOND] = second;
    }
    if (++this.size * 4 <= (3 * this.cells.length) / this.stride) return at;
    const key = own ? this.arena : this.home;
    const keyAt = cells[at + KEY_AT]!;
    this.grow();
    return this.find(key, keyAt, keyAt + end - start, hash);
  }

  /** Copies a key into the arena (a larger one holds the keys so far); returns where it starts. */
  private keep(buf: Buffer, start: number, end: number): number {
    const length = end - start;
    if (this.arenaUsed + length > this.arena.length) {
      const larger = Buffer.allocUnsafe(Math.max(2 * this.arena.length, this.arenaUsed + length));
      this.arena.copy(larger, 0, 0, this.arenaUsed);
      this.arena = larger;
    }
    buf.copy(this.arena, this.arenaUsed, start, end);
    this.arenaUsed += length;
    return this.arenaUsed - length;
  }

  private grow(): void {
    const { stride } = this;
    const old = this.cells;
    this.cells = new Int32Array(old.length * 2);
    this.mask = this.cells.length / stride - 1;
    for (let from = 0; from < old.length; from += stride) {
      if (old[from + MARK] === 0) continue;
      let slot = old[from + HASH]! & this.mask;
      while (this.cells[slot * stride + MARK] !== 0) slot = (slot + 1) & this.mask;
      this.cells.set(old.subarray(from, from + stride), slot * stride);
    }
  }
}

/** The fewest slots (a power of two) that keep `expected` keys at most three quarters full. */
function slotsFor(expected: number): number {
  let slots = 1024;
  while (3 * slots < 4 * expected) slots *= 2;
  return slots;
}
