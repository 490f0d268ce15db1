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
          }, reset() {
            // Writes to stdout in a call (a test's count: one a line is stdout line-buffered again).
            this.writes = 0;`,
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
  // jq's stdout is line-buffered in this build (musl takes Emscripten's stdout for a terminal):
  // each line was a write of its own, 200,000 for 200,000 records, each went through five
  // layers of the file system to the device. Writes to fd 1, the device FS.init made stdout, go
  // straight into the sink; and the first one makes stdout fully buffered (fullyBuffered below):
  // 9,551 writes instead, 40-45 ms less CPU of the 680 ms jq-wasm takes over 200,000 records
  // (its profile: _fd_write 24 ms and the sink's append 21 ms). jq flushes stdout as its main
  // ends, so each call's output is whole either way.
  [
    `function _fd_write(fd, iov, iovcnt, pnum) {
          try {`,
    `var stdoutBufferChecked = false;
        // musl's FILE for stdout, found beside its buffer (\`buf\` is where its writes start):
        // the words of its buf, buf_size (BUFSIZ), fd (1) and lbf ('\\n', line-buffered), at
        // musl's offsets for wasm32 (0, 4, 16 and 36 bytes from buf). lbf -1 makes it fully
        // buffered, as stdout is for a pipe. Not found (another libc), it stays as it is.
        function fullyBuffered(buf) {
          for (var at = Math.max(0, buf - 65536) >> 2, end = Math.min(HEAPU32.length - 10, buf + 65536 >> 2); at < end; at++) {
            if (HEAPU32[at] === buf && HEAPU32[at + 1] === 1024 && HEAP32[at + 4] === 1 && HEAP32[at + 9] === 10) {
              HEAP32[at + 9] = -1;
              break;
            }
          }
          return true;
        }
        function _fd_write(fd, iov, iovcnt, pnum) {
          if (fd === 1) {
            stdoutSink.writes++;
            if (!stdoutBufferChecked) stdoutBufferChecked = fullyBuffered(HEAPU32[iov >> 2]);
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
  // string; the handle says so with \`bytes\` (src/cli/jq/jq-engine.ts).
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
    'const stdoutBytes = stdoutSink.view();\n          return { get stdout() { return decoder.decode(stdoutBytes).trim(); }, stdoutBytes, stdoutWrites: stdoutSink.writes, stderr: stderrSink.toString().trim(), exitCode };',
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
