import type { Sink } from '../../src/cli/output/sink.js';

/** A sink that keeps what is written, for formatter tests. */
export function captureSink(): Sink & { text: string } {
  return {
    text: '',
    closed: false,
    streams: true,
    flushed: true,
    delivered: true,
    write(t: string | Uint8Array) {
      this.text += String(t);
    },
    async drain() {},
    async finish() {
      return undefined;
    },
  };
}
