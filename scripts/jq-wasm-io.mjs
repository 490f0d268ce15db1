// jq-wasm hands jq its input, and takes jq's output, one byte per JavaScript call: its
// Emscripten devices for stdin and stdout call back per byte, some 15 million calls for a
// 200,000-record export (55 ms of the 275 ms jq-wasm spends reading 15 MB, measured). This
// plugin gives those two devices a bulk path: the device copies as many bytes as jq asked for in
// one call. It also lets jq's input be bytes, which sgq's batches are (jq-batch.ts), so they are
// not decoded and encoded again. Same bytes, same order, same end of input; jq's own code is
// untouched. Each edit must match exactly once, or the build fails: a new jq-wasm whose glue
// has changed is then looked at again rather than left slow or half patched.
import { readFileSync } from 'node:fs';

const EDITS = [
  // The device: a read or write of `length` bytes goes to the callback's bulk path if it has one.
  [
    `}, read(stream, buffer, offset, length, pos) {
            var bytesRead = 0;`,
    `}, read(stream, buffer, offset, length, pos) {
            if (input.bulk) return input.bulk(buffer, offset, length);
            var bytesRead = 0;`,
  ],
  [
    `}, write(stream, buffer, offset, length, pos) {
            for (var i = 0; i < length; i++) {`,
    `}, write(stream, buffer, offset, length, pos) {
            if (output.bulk) return output.bulk(buffer, offset, length);
            for (var i = 0; i < length; i++) {`,
  ],
  // The output sink: bytes appended in one copy.
  [
    `bytes[length++] = byte;
          }, reset() {`,
    `bytes[length++] = byte;
          }, append(heap, offset, n) {
            if (length + n > bytes.length) {
              const grown = new Uint8Array(Math.max(bytes.length * 2, length + n));
              grown.set(bytes.subarray(0, length));
              bytes = grown;
            }
            bytes.set(new Uint8Array(heap.buffer, heap.byteOffset + offset, n), length);
            length += n;
            return n;
          }, reset() {`,
  ],
  // stdin and stdout get their bulk paths; stderr (a few lines at most) stays as it is.
  [
    `FS.init(() => {
            if (stdinBufferOffset >= stdinBuffer.length) return null;
            return stdinBuffer[stdinBufferOffset++] ?? null;
          }, (byte) => {
            if (byte != null) stdoutSink.push(byte);
          }, (byte) => {`,
    `const stdin = () => {
            if (stdinBufferOffset >= stdinBuffer.length) return null;
            return stdinBuffer[stdinBufferOffset++] ?? null;
          };
          stdin.bulk = (heap, offset, length) => {
            const n = Math.min(length, stdinBuffer.length - stdinBufferOffset);
            new Uint8Array(heap.buffer, heap.byteOffset + offset, n).set(stdinBuffer.subarray(stdinBufferOffset, stdinBufferOffset + n));
            stdinBufferOffset += n;
            return n;
          };
          const stdout = (byte) => {
            if (byte != null) stdoutSink.push(byte);
          };
          stdout.bulk = (heap, offset, n) => stdoutSink.append(heap, offset, n);
          FS.init(stdin, stdout, (byte) => {`,
  ],
  // The input may be UTF-8 bytes (sgq's batches), taken as they are instead of encoded from a
  // string; the handle says so with \`bytes\` (src/cli/output/jq-engine.ts).
  ['if (typeof input === "string") return input;', 'if (typeof input === "string" || input instanceof Uint8Array) return input;'],
  ['stdinBuffer = toByteArray(jsonString);', 'stdinBuffer = typeof jsonString === "string" ? toByteArray(jsonString) : jsonString;'],
  ['raw: raw2,', 'raw: raw2,\n    bytes: true,'],
  // jq's output as bytes (a view of the sink, valid until the next call), decoded only when
  // its text is asked for: sgq writes the bytes as they are, with jq's own -r.
  [
    `}, toString() {
            return decoder.decode(bytes.subarray(0, length));`,
    `}, view() {
            return bytes.subarray(0, length);
          }, toString() {
            return decoder.decode(bytes.subarray(0, length));`,
  ],
  [
    'return { stdout: stdoutSink.toString().trim(), stderr: stderrSink.toString().trim(), exitCode };',
    'const stdoutBytes = stdoutSink.view();\n          return { get stdout() { return decoder.decode(stdoutBytes).trim(); }, stdoutBytes, stderr: stderrSink.toString().trim(), exitCode };',
  ],
];

/** jq-wasm's glue with the bulk paths (EDITS), or an error naming the edit that no longer fits. */
export function withBulkIo(source) {
  let text = source;
  for (const [from, to] of EDITS) {
    const found = text.split(from).length - 1;
    if (found !== 1) throw new Error(`jq-wasm's glue has changed (an edit of scripts/jq-wasm-io.mjs matches ${found} times): check the edits against the new version`);
    text = text.replace(from, () => to);
  }
  return text;
}

/** The esbuild plugin: jq-wasm's Node entry, loaded with the bulk paths. */
export const jqWasmBulkIo = {
  name: 'jq-wasm-bulk-io',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]jq-wasm[\\/]dist[\\/]index\.cjs$/ }, (args) => ({ contents: withBulkIo(readFileSync(args.path, 'utf8')), loader: 'js' }));
  },
};
