import type { ResolvedConfig } from '../../core/config.js';
import type { Format } from '../formats/formats.js';
import type { JqFlags } from '../jq/jq.js';
import type { Reporter } from '../stderr/reporter.js';
import type { SnapshotCheckpoint } from '../snapshots/snapshot-jobs.js';
import type { DatasetCheckpoint } from '../dataset/dataset-checkpoint.js';
import type { Job, RunOptions } from './jobs.js';
import type { SinceMarks } from './since-marks.js';
import type { NightPlanner } from '../snapshots/nights.js';

/**
 * What a run will do, as data: the command builds it, the scope (scope.ts) opens what it
 * names and runs it. The jobs are built as the run takes them, from the checkpoints the
 * scope opened, so that each user's `since` is fixed once, when its job is made.
 */
export interface Plan {
  label: string;
  /** The route below /api/: its price (run-price.ts), and named where the balance it reports is recorded. */
  path: string;
  needsKey: boolean;
  /** The run's start: relative --since values and --since-last marks are worked out from it. */
  startedAt: Date;
  /** Jobs in flight at once: the caller keeps it to the jobs there are. */
  concurrency: number;
  /** `--parallel`, where the command has it; else the `parallel` setting, else 1. */
  parallel?: number;
  /** The run may make a great many calls (a list read from stdin): see ClientOptions. */
  manyCalls?: boolean;
  tagUser: boolean;
  /** How many users the run was given, when known in advance: the progress bar's bound. */
  users?: number;
  /** The --since-last state file this run reads and advances, if any. */
  marksFile?: (resolved: ResolvedConfig) => string;
  /**
   * The snapshot store this run stages snapshots in (`--snapshot`), if any; --notify's,
   * --confirm-lost's and --full-every's flags (the settings apply where they are not given),
   * --full and --key.
   */
  snapshots?: { dir?: string; notify?: string; confirmLost?: number; fullEvery?: number; full?: boolean; key?: string };
  /** `--dataset` (else the dataset setting) and the route's name there (graph.get_followers); undefined where a command has none. */
  dataset?: { dir?: string; route: string };
  /** Built as the run takes them, so a long list never sits in memory as jobs. */
  jobs: (resolved: ResolvedConfig, held: Held) => AsyncIterable<Job> | Iterable<Job>;
  resume?: RunOptions['resume'];
}

/** What the scope opened for the jobs: the checkpoints they stage in, and where to say things. */
export interface Held {
  marks?: SinceMarks;
  snapshots?: SnapshotCheckpoint;
  /** --full-every under --dry-run, which opens no checkpoint: which users are whole tonight. */
  nights?: NightPlanner;
  dataset?: DatasetCheckpoint;
  reporter: Reporter;
}

/** The output and limit flags shared by every command that fetches records. */
export interface OutputFlags extends JqFlags {
  output?: Format;
  fields?: string[];
  header?: boolean;
  /** --wide: the table's every field. */
  wide?: boolean;
  /** --bigint-as-string, given on the command line (else the setting). */
  bigintAsString?: boolean;
  pager?: boolean;
  raw?: boolean;
  out?: string;
  summary?: 'text' | 'json';
  limit?: number;
  maxCredits?: number;
  /** --wait-lock, in ms, and as given. */
  waitLock?: { ms: number; text: string };
  /** Print the requests and the worst-case credits instead of sending anything. */
  dryRun?: boolean;
  /** Every exchange as an NDJSON line in this file. */
  trace?: string;
  /** `sgq api -i`: status line and headers before each answer's records. */
  include?: boolean;
  /** --cache: reuse answers kept less than this long ago. */
  cache?: { ms: number; text: string };
  /** --max-wait: the longest Retry-After of a 429 waited out past sgq's cap. */
  maxWait?: { ms: number; text: string };
}
