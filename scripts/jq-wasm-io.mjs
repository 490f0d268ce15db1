// jq-wasm hands jq its input, and takes jq's output, one byte per JavaScript call: its
// Emscripten devices for stdin and stdout call back per byte, some 15 million calls for a
// 200,000-record export (55 ms of the 275 ms jq-wasm spends reading 15 MB, measured). This
// plugin gives stdin's device a bulk path (as many bytes as jq asked for in one call) and takes
// jq's writes to stdout straight into the sink, a call per write rather than per byte. It also
// lets jq's input be bytes, which sgq's batches are (jq-batch.ts), so they are not decoded and
// encoded again. Same bytes, same order, same end of input; jq's own code is
// untouched. Each edit must match exactly once, or the build fails: a new jq-wasm whose glue
// has changed is then looked at again rather than left slow or half patched.
import { readFileSync } from 'node:fs';

const EDITS = [
  // The stdin device: a read of `length` bytes goes to the callback's bulk path if it has one.
  [
    `}, read(stream, buffer, offset, length, pos) {
            var bytesRead = 0;`,
    `}, read(stream, buffer, offset, length, pos) {
            if (input.bulk) return input.bulk(buffer, offset, length);
            var bytesRead = 0;`,
  ],
  // The output sink: bytes appended from jq's memory in one copy.
  [
    `bytes[length++] = byte;
          }, reset() {`,
    `bytes[length++] = byte;
          }, append(heapU8, offset, n) {
            if (length + n > bytes.length) {
              const grown = new Uint8Array(Math.max(bytes.length * 2, length + n));
              grown.set(bytes.subarray(0, length));
              bytes = grown;
            }
            // Most writes are one value or its newline: copied by hand, they allocate no view.
            if (n <= 64) for (let k = 0; k < n; k++) bytes[length + k] = heapU8[offset + k];
            else bytes.set(heapU8.subarray(offset, offset + n), length);
            length += n;
          }, reset() {`,
  ],
  // stdin gets its bulk path; stdout is written below the device (next edit); stderr (a few lines at most) stays as it is.
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
          FS.init(stdin, (byte) => {
            if (byte != null) stdoutSink.push(byte);
          }, (byte) => {`,
  ],
  // jq's stdout is unbuffered in this build: each value and each newline is a write of its own
  // (400,000 for 200,000 records), and each went through five layers of the file system to the
  // device. Writes to fd 1, the device FS.init made stdout, go straight into the sink.
  [
    `function _fd_write(fd, iov, iovcnt, pnum) {
          try {`,
    `function _fd_write(fd, iov, iovcnt, pnum) {
          if (fd === 1) {
            var written = 0;
            for (var i = 0; i < iovcnt; i++, iov += 8) {
              var len = HEAPU32[iov + 4 >> 2];
              stdoutSink.append(HEAPU8, HEAPU32[iov >> 2], len);
              written += len;
            }
            HEAPU32[pnum >> 2] = written;
            return 0;
          }
          try {`,
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
