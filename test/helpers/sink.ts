import type { Sink } from '../../src/cli/output/sink.js';

const decoder = new TextDecoder();

/** A sink that keeps what is written, for formatter tests. */
export function captureSink(): Sink & { text: string } {
  return {
    text: '',
    closed: false,
    streams: true,
    flushed: true,
    delivered: true,
    write(t: string | Uint8Array) {
      // jq's worker hands its output over as UTF-8 bytes (jq-engine.ts).
      this.text += typeof t === 'string' ? t : decoder.decode(t);
    },
    async drain() {},
    async finish() {
      return undefined;
    },
  };
}
