import { OLD_SPACE_BYTES } from './old-space.js';

// The memory a run's users in flight may hold together: the record lines of their snapshot
// captures (capture.ts), sorted or held for their diffs, as the UTF-8 bytes the store writes
// (line-bytes.ts). One budget for a run, not one per user: with a budget per user, 8 users of
// 8,500 followers at --concurrency 8 each held a whole export and the nightly job peaked at
// 265-285 MiB; a user that cannot hold more spills its sort to disk.

/**
 * Bytes of record lines a run's users hold in memory in all: 4 MiB, room for 8 users of 1,000
 * followers of the service's shape (~476 bytes a record) to hold their whole exports at once;
 * a 128th of V8's old generation (old-space.ts) when that is smaller (`node
 * --max-old-space-size`), so a capped heap spills sooner instead of running out.
 */
export const SHARED_BYTES = Math.min(4 * 1024 * 1024, Math.floor(OLD_SPACE_BYTES / 128));

/** What a run's holders share (bytes); each holder asks through its own MemoryShare. */
export class MemoryBudget {
  private used = 0;
  private spills = 0;

  constructor(
    readonly total: number,
    /** Told of the first sort that spills for want of room in it (the CLI then keeps V8's heap tighter: scope.ts). */
    private readonly onSpill?: () => void,
  ) {}

  /** A holder's sort spilled to disk: the first time, onSpill is told. */
  spilled(): void {
    if (this.spills++ === 0) this.onSpill?.();
  }

  /** What the holders hold now, in all. */
  get held(): number {
    return this.used;
  }

  /** One holder's part, empty at first. */
  share(): MemoryShare {
    return new MemoryShare(this);
  }

  /** Takes `more` (a negative number gives some back); false, taking nothing, when it does not fit. */
  take(more: number): boolean {
    if (more > 0 && this.used + more > this.total) return false;
    this.used += more;
    return true;
  }
}

/** One holder's part of a MemoryBudget: what it holds, grown only while the budget has room. */
export class MemoryShare {
  private size = 0;

  constructor(private readonly budget: MemoryBudget) {}

  get held(): number {
    return this.size;
  }

  /** Holds `size` in all from now; false when the budget cannot give that much (what was held stays held). */
  resize(size: number): boolean {
    if (!this.budget.take(size - this.size)) return false;
    this.size = size;
    return true;
  }

  /** Gives back all it holds. */
  release(): void {
    this.resize(0);
  }

  /** Its sort spilled to disk (the budget had no room for more). */
  spilled(): void {
    this.budget.spilled();
  }
}

/** What a run's users in flight share: the bytes of the record lines they hold. */
export class RunMemory {
  readonly lines: MemoryBudget;

  constructor(bytes = SHARED_BYTES, onSpill?: () => void) {
    this.lines = new MemoryBudget(bytes, onSpill);
  }
}
