import { workerData } from 'node:worker_threads';
import { AckWindow } from './ack-window.js';
import type { FromThread, ThreadData, ToThread } from './lane.js';

// A worker thread's side of its lane (lane.ts): the lane's data, requests handled one at a
// time in the order they came, each answered in turn, and notes either way. A handler that
// throws is a thread that failed: the error ends the thread, and the lane fails what waits
// with its message (a handler that has answers for its failures returns them instead).

export interface ThreadSide<D, NoteOut> {
  /** What the lane was opened with. */
  readonly data: D;
  /** A note to the lane, heard out of turn. */
  note(note: NoteOut, transfer?: ArrayBuffer[]): void;
  /**
   * A note the lane acknowledges once it has dealt with it (its onNote's promise settled):
   * resolves once posted, which waits while notes of `size` (characters, say) past the
   * window are unacknowledged, so that neither thread's heap holds more.
   */
  noteInWindow(note: NoteOut, size: number): Promise<void>;
  /** Resolves once every note posted in the window is acknowledged. */
  drained(): Promise<void>;
  /**
   * Handles the lane's requests in order: `transfer` names the buffers of an answer that move
   * rather than being copied; `onNote` hears the lane's notes at once.
   */
  serve<Req, Ans, NoteIn = never>(handle: (request: Req) => Ans | Promise<Ans>, options?: { transfer?: (answer: Ans) => ArrayBuffer[]; onNote?: (note: NoteIn) => void }): void;
}

/** `window`: the size of the notes in the window (noteInWindow) unacknowledged, at most. */
export function threadSide<D, NoteOut = never>(window = Number.POSITIVE_INFINITY): ThreadSide<D, NoteOut> {
  const { port, data } = workerData as ThreadData<D>;
  const post = (message: FromThread<unknown, NoteOut>, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  const unacknowledged = new AckWindow(window);
  return {
    data,
    note: (note, transfer) => post({ note }, transfer),
    async noteInWindow(note, size) {
      await unacknowledged.room();
      unacknowledged.posted(size);
      post({ note, ack: true });
    },
    drained: () => unacknowledged.drained(),
    serve(handle, options = {}) {
      let queue = Promise.resolve();
      port.on('message', (message: ToThread<Parameters<typeof handle>[0], unknown>) => {
        if ('ack' in message) return unacknowledged.acknowledged();
        if ('note' in message) return options.onNote?.(message.note as never);
        queue = queue
          .then(() => handle(message.request))
          .then((answer) => post({ answer }, options.transfer?.(answer)))
          // Thrown on a turn of its own, so that it ends the thread: the lane tells it.
          .catch((error: unknown) => {
            setImmediate(() => {
              throw error;
            });
          });
      });
    },
  };
}
