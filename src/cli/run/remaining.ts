import { writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { configPath, type Env } from '../../core/config.js';
import { closeTemp, createTemp, moveIntoPlace, sealTemp, type TempFile } from '../../fs/atomic.js';
import { fileWarning } from '../../fs/file-errors.js';
import { makePrivateFolder } from '../../fs/modes.js';
import { sweepLeftovers } from '../../fs/sweep.js';
import { ownerFolder, type StateOwner } from '../../core/service.js';
import { removeFile } from '../../fs/remove.js';

/** Up to this many users a resume names them on its command line; more go to a file read on stdin. */
export const INLINE_UP_TO = 10;

/**
 * Where the users left go without --out: beside the config, as the --since-last marks do,
 * one file per service, profile and command (`remaining/@SERVICE/PROFILE/graph-followers.txt`,
 * service.ts), so a sandbox run never replaces the list a real run left; never the current
 * folder, which for a cron job is the home folder. Without a config folder (no home), the temp folder.
 */
export function defaultRemainingFile(label: string, env: Env, owner: StateOwner): string {
  const config = configPath(env);
  // node:os only without a config folder: every run works this name out.
  const base = join(config ? dirname(config) : process.getBuiltinModule('node:os').tmpdir(), 'remaining');
  return join(ownerFolder(base, owner), `${label.replace(/[^\w.-]+/g, '-')}.txt`);
}

/** Where a resume finds its users: on its command line, or in a file given on stdin. */
export type ResumeSubjects = { users: readonly (string | null)[] } | { file: string };

/**
 * The users a run did not finish, in input order, kept in memory only while they are few.
 * The file is written beside the run's output under a temporary name and renamed into place
 * at the end, so a resume that is reading an earlier list from it keeps reading that list.
 */
export class RemainingUsers {
  count = 0;
  private readonly inline: (string | null)[] = [];
  private pending = '';
  private temp?: TempFile;
  /** Why the list could not be saved, if it could not. */
  failure?: string;

  constructor(private readonly file: string) {}

  add(user: string | null): void {
    this.count++;
    if (this.count <= INLINE_UP_TO) {
      this.inline.push(user);
      return;
    }
    if (this.count === INLINE_UP_TO + 1) this.pending = this.inline.map((u) => `${u}\n`).join('');
    this.pending += `${user}\n`;
    if (this.pending.length >= 1 << 16) this.flush();
  }

  /** Where a resume finds them; undefined when there are none or they could not be saved. */
  finish(): ResumeSubjects | undefined {
    if (this.count === 0) return undefined;
    if (this.count <= INLINE_UP_TO) return { users: this.inline };
    this.flush();
    if (this.failure || !this.temp) return undefined;
    try {
      sealTemp(this.temp.fd, {});
      closeTemp(this.temp);
      moveIntoPlace(this.temp.path, this.file);
    } catch (error) {
      this.fail(error);
      return undefined;
    }
    return { file: this.file };
  }

  private flush(): void {
    if (this.failure) return;
    try {
      if (!this.temp) {
        makePrivateFolder(dirname(this.file));
        sweepLeftovers(dirname(this.file), basename(this.file));
        this.temp = createTemp(this.file);
      }
      const bytes = Buffer.from(this.pending);
      for (let at = 0; at < bytes.length; ) at += writeSync(this.temp.fd, bytes, at);
    } catch (error) {
      this.fail(error);
    }
    this.pending = '';
  }

  private fail(error: unknown): void {
    this.failure = fileWarning(error, `cannot save the users left to ${this.file}`);
    if (!this.temp) return;
    try {
      closeTemp(this.temp);
    } finally {
      removeFile(this.temp.path);
    }
  }
}
