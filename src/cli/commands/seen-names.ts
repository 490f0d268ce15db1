/**
 * An exact set of names for skipping duplicates in a long list, kept outside the JS heap: each
 * name's characters in one growing buffer (a byte each when all are below U+0100, as user
 * names are; two otherwise), found through an open-addressing table of offsets. A million
 * names of a dozen characters take about 30 MiB here; a Set<string> of them cost some
 * 100 MiB of resident memory, half of the budget of a million-user run.
 */
export class SeenNames {
  /** Each name as [4-byte header: length in bytes, top bit set for two-byte characters][bytes]. */
  private arena = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  /** Offset in the arena of each slot's name, -1 when empty; a power of two long. */
  private slots = new Int32Array(1 << 10).fill(-1);
  private size = 0;

  /** Adds `name`; false when it was already there. */
  add(name: string): boolean {
    const wide = hasWideCharacters(name);
    const length = wide ? name.length * 2 : name.length;
    const header = wide ? (length | 0x80000000) >>> 0 : length;
    this.reserve(4 + length);
    // Written at the end of the arena, kept only if it is new.
    const start = this.used + 4;
    this.arena.write(name, start, wide ? 'utf16le' : 'latin1');
    const mask = this.slots.length - 1;
    let i = fnv1a(this.arena, start, start + length) & mask;
    for (; this.slots[i] !== -1; i = (i + 1) & mask) {
      const at = this.slots[i]!;
      if (this.arena.readUInt32LE(at) === header && this.arena.compare(this.arena, start, start + length, at + 4, at + 4 + length) === 0) return false;
    }
    this.arena.writeUInt32LE(header, this.used);
    this.slots[i] = this.used;
    this.used += 4 + length;
    if (++this.size * 4 > this.slots.length * 3) this.grow();
    return true;
  }

  private reserve(bytes: number): void {
    if (this.used + bytes <= this.arena.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(Math.ceil(this.arena.length * 1.5), this.used + bytes));
    this.arena.copy(bigger, 0, 0, this.used);
    this.arena = bigger;
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = slots.length - 1;
    for (const at of this.slots) {
      if (at === -1) continue;
      const length = this.arena.readUInt32LE(at) & 0x7fffffff;
      let i = fnv1a(this.arena, at + 4, at + 4 + length) & mask;
      while (slots[i] !== -1) i = (i + 1) & mask;
      slots[i] = at;
    }
    this.slots = slots;
  }
}

function hasWideCharacters(name: string): boolean {
  for (let i = 0; i < name.length; i++) if (name.charCodeAt(i) > 0xff) return true;
  return false;
}

/** 32-bit FNV-1a over bytes [from, to) of `buffer`. */
function fnv1a(buffer: Buffer, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ buffer[i]!, 0x01000193);
  return hash;
}
