// A hash set of keys held as bytes, for the hash diff: open addressing over typed arrays, so
// that a million keys cost no object each, nothing for the garbage collector to trace, and
// no string. Keys are compared byte for byte whenever their hashes agree: a collision of
// hashes costs a comparison, never a wrong match.

const EMPTY = -1;

export class KeyTable {
  /** Per entry: where its key's bytes are (`bufs[i]` from `starts[i]`, `lengths[i]` long), and their hash. */
  private bufs: Buffer[] = [];
  private starts: Int32Array;
  private lengths: Int32Array;
  private hashes: Int32Array;
  /** Per entry: two numbers its owner keeps with it (where its record is), and a mark. */
  firsts: Int32Array;
  seconds: Int32Array;
  marks: Uint8Array;
  /** Per slot: an entry, or EMPTY; at most half of them used. */
  private slots: Int32Array;
  private mask: number;
  size = 0;

  /** Sized for `expected` keys (it grows past them): growing makes garbage, sizing once does not. */
  constructor(expected = 1024) {
    const entries = Math.max(1024, expected);
    this.starts = new Int32Array(entries);
    this.lengths = new Int32Array(entries);
    this.hashes = new Int32Array(entries);
    this.firsts = new Int32Array(entries);
    this.seconds = new Int32Array(entries);
    this.marks = new Uint8Array(entries);
    this.slots = new Int32Array(slotsFor(entries)).fill(EMPTY);
    this.mask = this.slots.length - 1;
  }

  /** Empties the table for `expected` keys, keeping its arrays when they are large enough: one table serves every partition. */
  reset(expected: number): void {
    this.bufs = [];
    this.size = 0;
    if (expected > this.hashes.length) {
      Object.assign(this, new KeyTable(expected));
      return;
    }
    this.slots.fill(EMPTY);
  }

  /**
   * The entry holding this key, or -1 after adding it as entry `size - 1` with `first`,
   * `second` and mark 0 (the caller keeps `buf` unchanged for as long as the table lives).
   */
  findOrAdd(buf: Buffer, start: number, end: number, hash: number, first: number, second: number): number {
    const found = this.find(buf, start, end, hash);
    if (found >= 0) return found;
    this.add(buf, start, end, hash, first, second);
    return -1;
  }

  /** Adds a key known not to be there yet; returns its entry. */
  add(buf: Buffer, start: number, end: number, hash: number, first: number, second: number): number {
    if (this.size === this.hashes.length) this.growEntries();
    const entry = this.size++;
    this.bufs.push(buf);
    this.starts[entry] = start;
    this.lengths[entry] = end - start;
    this.hashes[entry] = hash;
    this.firsts[entry] = first;
    this.seconds[entry] = second;
    this.marks[entry] = 0;
    this.place(entry);
    if (this.size * 2 > this.slots.length) this.growSlots();
    return entry;
  }

  /** The entry holding this key, or -1. */
  find(buf: Buffer, start: number, end: number, hash: number): number {
    const length = end - start;
    for (let slot = this.slotOf(hash); ; slot = (slot + 1) & this.mask) {
      const entry = this.slots[slot]!;
      if (entry === EMPTY) return -1;
      if (this.hashes[entry] === hash && this.lengths[entry] === length && sameBytes(this.bufs[entry]!, this.starts[entry]!, buf, start, length)) return entry;
    }
  }

  /** The hash is mixed already (byte-key.ts): its low bits choose the slot, its high bits the partition. */
  private slotOf(hash: number): number {
    return hash & this.mask;
  }

  private place(entry: number): void {
    let slot = this.slotOf(this.hashes[entry]!);
    while (this.slots[slot] !== EMPTY) slot = (slot + 1) & this.mask;
    this.slots[slot] = entry;
  }

  private growEntries(): void {
    const grow = <T extends Int32Array | Uint8Array>(from: T, to: T): T => (to.set(from), to);
    const n = this.hashes.length * 2;
    this.starts = grow(this.starts, new Int32Array(n));
    this.lengths = grow(this.lengths, new Int32Array(n));
    this.hashes = grow(this.hashes, new Int32Array(n));
    this.firsts = grow(this.firsts, new Int32Array(n));
    this.seconds = grow(this.seconds, new Int32Array(n));
    this.marks = grow(this.marks, new Uint8Array(n));
  }

  private growSlots(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(EMPTY);
    this.mask = this.slots.length - 1;
    for (let entry = 0; entry < this.size; entry++) this.place(entry);
  }
}

/** Short keys are compared in JS: a call into C++ per comparison costs more than the loop. */
function sameBytes(a: Buffer, at: number, b: Buffer, bt: number, length: number): boolean {
  if (length > 32) return a.compare(b, bt, bt + length, at, at + length) === 0;
  for (let i = 0; i < length; i++) if (a[at + i] !== b[bt + i]) return false;
  return true;
}

function slotsFor(entries: number): number {
  let slots = 2048;
  while (slots < 2 * entries) slots *= 2;
  return slots;
}
