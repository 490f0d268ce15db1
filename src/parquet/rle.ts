import type { Bytes } from './byte-buffer.js';

// Parquet's RLE/bit-packed hybrid, for definition levels and dictionary indices: a run of 8
// or more equal values as one RLE run, anything else in bit-packed groups of 8 values.
// It follows hyparquet-writer 0.17.0's code byte for byte (MIT: NOTICE-hyparquet-writer.txt).

/** Appends `values` (each below 2^bitWidth) in the hybrid encoding. */
export function writeRleBitPackedHybrid(out: Bytes, values: ArrayLike<number>, bitWidth: number): void {
  let pending = 0;
  let packedFrom = 0;
  let i = 0;
  while (i < values.length) {
    const first = values[i]!;
    let run = 1;
    while (i + run < values.length && values[i + run] === first) run++;
    if (run >= 8) {
      if (pending) writeBitPacked(out, values, packedFrom, pending, bitWidth);
      pending = 0;
      writeRun(out, first, run, bitWidth);
      i += run;
    } else {
      if (pending === 0) packedFrom = i;
      pending++;
      i += 8;
    }
  }
  if (pending) writeBitPacked(out, values, packedFrom, pending, bitWidth);
}

/** One RLE run: its header (count << 1), then the value in as many bytes as the width needs. */
function writeRun(out: Bytes, value: number, count: number, bitWidth: number): void {
  out.appendVarInt(count << 1);
  const width = (bitWidth + 7) >> 3;
  for (let j = 0; j < width; j++) out.appendUint8((value >> (j << 3)) & 0xff);
}

/** `groups` groups of 8 values from `start`, bit-packed, the first value in the lowest bits (past the end: zeros). */
function writeBitPacked(out: Bytes, values: ArrayLike<number>, start: number, groups: number, bitWidth: number): void {
  out.appendVarInt((groups << 1) | 1);
  if (bitWidth === 0) return;
  const mask = (1 << bitWidth) - 1;
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < groups * 8; i++) {
    const at = start + i;
    buffer |= (at < values.length ? values[at]! & mask : 0) << bits;
    bits += bitWidth;
    for (; bits >= 8; bits -= 8) {
      out.appendUint8(buffer & 0xff);
      buffer >>>= 8;
    }
  }
  if (bits > 0) out.appendUint8(buffer & 0xff);
}
