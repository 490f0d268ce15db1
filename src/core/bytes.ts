// Copying and comparing short runs of bytes (record lines, keys) in the hash diff, four bytes
// at a time through DataViews: a record line is short, so Buffer#copy and Buffer#compare
// cost more in their call into C++ (and the Uint8Array view Node 20's copy makes) than the
// work, and a loop over single bytes was a sixth of a scan and of a join in the profile.

/** Past this length, the native call is the cheaper one. */
const NATIVE_FROM = 512;

/**
 * DataViews over the last two buffers asked for in one position (they change a chunk at a
 * time): two, because a scan that also probes a partition (diff/unsorted-diff.ts' readNewer)
 * compares against a field's prefix and the partition's records in turn.
 */
class LastViews {
  private bufs: (Buffer | undefined)[] = [undefined, undefined];
  private views: DataView[] = [new DataView(new ArrayBuffer(0)), new DataView(new ArrayBuffer(0))];
  private next = 0;
  of(buf: Buffer): DataView {
    if (buf === this.bufs[0]) return this.views[0]!;
    if (buf === this.bufs[1]) return this.views[1]!;
    const i = this.next;
    this.next = 1 - i;
    this.bufs[i] = buf;
    return (this.views[i] = viewOf(buf));
  }
}

export const viewOf = (buf: Buffer): DataView => new DataView(buf.buffer, buf.byteOffset, buf.byteLength);

const [first, second, source] = [new LastViews(), new LastViews(), new LastViews()];

/** Whether `a[at, at + length)` and `b[bt, bt + length)` are the same bytes. */
export function sameBytes(a: Buffer, at: number, b: Buffer, bt: number, length: number): boolean {
  if (length > NATIVE_FROM) return a.compare(b, bt, bt + length, at, at + length) === 0;
  let i = 0;
  if (length >= 8) {
    const av = first.of(a);
    const bv = second.of(b);
    for (; i + 4 <= length; i += 4) if (av.getInt32(at + i) !== bv.getInt32(bt + i)) return false;
  }
  for (; i < length; i++) if (a[at + i] !== b[bt + i]) return false;
  return true;
}

/** Copies `src[start, end)` into `dst` (whose view is `dv`) at `at`; returns where the copy ends. */
export function copyBytes(src: Buffer, start: number, end: number, dst: Buffer, dv: DataView, at: number): number {
  const length = end - start;
  if (length > NATIVE_FROM) return at + src.copy(dst, at, start, end);
  let i = start;
  if (length >= 8) {
    const sv = source.of(src);
    for (; i + 4 <= end; i += 4, at += 4) dv.setInt32(at, sv.getInt32(i));
  }
  for (; i < end; i++) dst[at++] = src[i]!;
  return at;
}
