import type { Readable } from 'node:stream';
import { interruptedBy } from '../../core/errors.js';

// Ctrl-C or SIGTERM must end a command within a second, also one waiting on stdin for a
// producer that has gone quiet (`tail -f log | sgq …`, an idle pipe). What stdin delivers
// without waiting is still read after a stop (a list redirected from a file goes whole into
// the resume list); a wait for more is not.

/** After a stop, a read that waits this long ends the input. */
export const QUIET_AFTER_STOP_MS = 200;

/** `next`, or undefined once `signal` has aborted and `next` has not settled within QUIET_AFTER_STOP_MS. */
function unlessQuiet<T>(next: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const quiet = () => (timer = setTimeout(resolve, QUIET_AFTER_STOP_MS, undefined));
    if (signal.aborted) quiet();
    else signal.addEventListener('abort', quiet, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', quiet);
    };
    next.then(
      (value) => (done(), resolve(value)),
      (error: unknown) => (done(), reject(error)),
    );
  });
}

/**
 * The chunks of a stream until it ends, or until a stop finds it quiet: then `cut` is called
 * (what was not read is not known) and the stream is closed.
 */
export async function* chunksUntilStopped(stream: Readable, signal: AbortSignal | undefined, cut: () => void = () => undefined): AsyncGenerator<unknown> {
  const chunks = stream[Symbol.asyncIterator]();
  let quiet = false;
  try {
    for (;;) {
      const next = chunks.next();
      // Destroying the stream below settles a pending read: nobody waits for it then.
      next.catch(() => undefined);
      const step = signal ? await unlessQuiet(next, signal) : await next;
      if (step === undefined) {
        quiet = true;
        return cut();
      }
      if (step.done) return;
      yield step.value;
    }
  } finally {
    // The iterator's return() would wait for the pending read: the stream is destroyed instead.
    if (quiet) stream.destroy();
    else await chunks.return?.();
  }
}

/** The whole text of a stream; a stop ends a wait for more with exit 130 or 143. */
export async function textUntilStopped(stream: Readable, signal: AbortSignal | undefined): Promise<string> {
  let text = '';
  let cut = false;
  stream.setEncoding('utf8');
  for await (const chunk of chunksUntilStopped(stream, signal, () => (cut = true))) text += chunk as string;
  if (cut || signal?.aborted) throw interruptedBy(signal?.reason);
  return text;
}
