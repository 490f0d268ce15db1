import { ExitCode } from '../../core/errors.js';
import { maskSecret } from '../../core/config.js';
import { AccountRoom, type UserChanges } from '../../core/snapshots/snapshots.js';
import { postJson, type PostOptions } from '../../core/webhook.js';
import { fileError } from '../../fs/file-errors.js';
import type { Lock } from '../../fs/lock.js';
import type { Reporter } from '../stderr/reporter.js';
import type { NotifyOutbox } from './notify-outbox.js';

// `--notify URL` of a --snapshot run: the changes of the users whose snapshots commit are kept
// in the outbox (notify-outbox.ts) before those snapshots commit, so a run killed at any
// instant after its snapshots were kept still has its notification for the next run. Once the
// run's output and snapshots are done, it sends what earlier runs kept (each once), then its
// own, one POST. A notification that fails is said on stderr (even with --quiet), changes no
// exit code (the data is safe) and stays kept for the next run.

export interface NotifierOptions {
  outbox: NotifyOutbox;
  url: string;
  /** What ran, for the summary line: `sgq graph followers`. */
  command: string;
  /** When the run started: its file's name. */
  startedAt: Date;
  post: PostOptions;
  reporter: Reporter;
}

const hasChanges = (c: UserChanges) => c.counts.gained + c.counts.lost + c.counts.renamed > 0;

export class RunNotifier {
  /** The room left for accounts listed, shared by every user of the run. */
  readonly room = new AccountRoom();
  /** This run's notification in the outbox, once a commit had changes, and its parts so far. */
  private own?: { run: string; lock: Lock; parts: number };

  constructor(private readonly options: NotifierOptions) {}

  /** The address as messages show it. */
  private get shown(): string {
    return maskSecret(this.options.url);
  }

  /**
   * Called with the changes of the users a commit takes, before their snapshots commit: they
   * are written to the outbox as a part of the run's notification. Throws when they cannot be
   * kept, and the snapshots are then not kept either, so the next run finds these changes again.
   */
  async keep(cut: readonly UserChanges[]): Promise<void> {
    const found = cut.filter(hasChanges);
    if (found.length === 0) return;
    const { outbox, command } = this.options;
    try {
      this.own ??= { ...(await outbox.create(this.options.startedAt)), parts: 0 };
      outbox.writePart(this.own.run, this.own.parts + 1, { command, changes: found });
      this.own.parts++;
    } catch (error) {
      throw fileError(error, { what: `cannot keep the notification in ${outbox.folder}`, exitCode: ExitCode.internal, then: 'the records were written; the snapshots were not kept, so the next run finds these changes again' });
    }
  }

  /**
   * After the run: the notifications earlier runs kept, each once, oldest first, then this
   * run's. Never throws: what fails is said and stays kept.
   */
  async deliver(): Promise<void> {
    const { outbox, reporter, post } = this.options;
    if (post.signal?.aborted) {
      if (this.own) reporter.warn(`the notification of this run was not sent (the run was stopped); it is kept in ${outbox.folder} and sent by the next run with --notify`);
      return;
    }
    const kept = outbox.kept();
    for (const { run, parts } of kept) {
      if (run === this.own?.run) continue;
      const lock = await outbox.claim(run);
      if (!lock) continue; // a run still going holds it, and sends it itself
      try {
        await this.sendKept(run, parts);
      } finally {
        lock.release();
      }
    }
    const mine = this.own && kept.find((k) => k.run === this.own!.run);
    if (mine) await this.sendOwn(mine.parts);
  }

  private async sendKept(run: string, parts: readonly string[]): Promise<void> {
    const { outbox, reporter } = this.options;
    const body = outbox.body(parts);
    if (!body) {
      reporter.warn(`skipped the kept notification ${run} in ${outbox.folder}: it is not one sgq wrote; delete its files if they are not yours`);
      return;
    }
    const failure = await this.send(body.text);
    if (failure) {
      reporter.warn(`a notification kept from an earlier run (${run}) was not delivered either: ${failure}; it stays kept in ${outbox.folder} for the next run with --notify`);
      return;
    }
    outbox.remove(parts);
    reporter.info(`sgq: sent to ${this.shown} a notification kept from an earlier run: ${body.line}`);
  }

  private async sendOwn(parts: readonly string[]): Promise<void> {
    const { outbox, reporter } = this.options;
    const body = outbox.body(parts);
    if (!body) return;
    const failure = await this.send(body.text);
    if (failure) {
      reporter.warn(`the notification of this run was not delivered: ${failure}; it is kept in ${outbox.folder} and sent again by the next run with --notify`);
      return;
    }
    outbox.remove(parts);
    this.release();
    reporter.info(`sgq: notified ${this.shown}: ${body.line}`);
  }

  /** One POST; the failure in words, or undefined once a receiver answered 2xx. */
  private async send(body: string): Promise<string | undefined> {
    const { url, post, reporter } = this.options;
    reporter.trace(`notify: POST ${Buffer.byteLength(body)} bytes to ${this.shown}`);
    try {
      await postJson(url, body, post);
      return undefined;
    } catch (error) {
      if (post.signal?.aborted) return 'the run was stopped';
      return error instanceof Error ? error.message : String(error);
    }
  }

  private release(): void {
    this.own?.lock.release();
    this.own = undefined;
  }

  /** Lets go of this run's notification (kept if it was not sent). */
  close(): void {
    this.release();
  }
}
