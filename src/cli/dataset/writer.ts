import { isObject, type JsonObject } from '../../core/classify.js';
import { parseJson, parseKept, type Json } from '../../core/json.js';
import { pageRecords, type PageText } from '../../core/page.js';
import { DatasetLayout, type Kind } from '../../core/dataset/layout.js';
import { DatasetStream } from '../../core/dataset/stream.js';
import { FETCHED_SINCE, datasetSchema } from '../../core/dataset/schema.js';

// The writing half of --dataset: the run's Parquet parts, fed with each page's body as text.
// It runs in a worker thread (worker.ts) so that parsing, encoding and GZIP take the second
// core, or in the main thread where the worker's file is not built (writer-lane.ts); either way it
// answers requests one at a time, in order, and the same way.

/** Where a run's files go and the values of its own columns. */
export interface WriterSetup {
  /** The dataset's folder, resolved. */
  root: string;
  route: string;
  /** The day of the run's partition (YYYY-MM-DD) and its id, which names its files. */
  date: string;
  runId: string;
  /** `fetched_at` of every record and `observed_at` of every change: the run's start. */
  startedAt: string;
}

export type WriterRequest =
  /** Creates the first part's file: proves the folder can be written. */
  | { kind: 'open' }
  | ({ kind: 'page'; user: string | null; since?: string } & PageText)
  /** Records already parsed, to a writer in the run's own thread (writer-lane.ts): the run's objects, read, never changed. */
  | { kind: 'parsed'; user: string | null; since?: string; records: readonly JsonObject[] }
  /** Records (or changes) as NDJSON text, for what comes without a page. */
  | { kind: Kind; user: string | null; since?: string; ndjson: string }
  /** Seals the parts written so far: the next commit renames them, and no later one. */
  | { kind: 'cut' }
  /** Renames into their partitions the parts the last cut sealed. */
  | { kind: 'commit' }
  | { kind: 'drop' };

/** What failed: an errno code where there is one (ENOSPC), with the file it names, else the message. */
export interface WriterFailure {
  code?: string;
  message: string;
  path?: string;
  /** The writer's thread itself failed (it could not start, or died), not a write. */
  thread?: boolean;
}

export interface WriterAnswer {
  failure?: WriterFailure;
}

export class DatasetWriter {
  private readonly streams: Record<Kind, DatasetStream>;
  /** The first write that failed: nothing more is written, and every later answer carries it. */
  private failure?: WriterFailure;

  constructor(
    private readonly setup: WriterSetup,
    warn: (line: string) => void,
  ) {
    const layout = new DatasetLayout(setup.root);
    // One set of warnings said for the whole run: a value that does not fit is told once, whatever the part.
    const said = new Set<string>();
    const stream = (kind: Kind) => new DatasetStream({ layout, kind, route: setup.route, date: setup.date, runId: setup.runId }, { declared: datasetSchema(setup.route, kind), warn, said });
    this.streams = { records: stream('records'), changes: stream('changes') };
  }

  handle(request: WriterRequest): WriterAnswer {
    if (request.kind === 'drop') {
      this.streams.records.drop();
      this.streams.changes.drop();
      return {};
    }
    if (this.failure) return { failure: this.failure };
    try {
      this.apply(request);
      return {};
    } catch (error) {
      this.failure = failureOf(error);
      return { failure: this.failure };
    }
  }

  private apply(request: Exclude<WriterRequest, { kind: 'drop' }>): void {
    switch (request.kind) {
      case 'open':
        this.streams.records.open();
        return;
      case 'page':
        return this.addRecords(request, grantedRecords(request));
      case 'parsed':
        // Read, never changed: the run prints and stores these objects too.
        return this.addRecords(request, request.records);
      case 'records':
        return this.addRecords(request, fromNdjson(request.ndjson));
      case 'changes':
        return this.addChanges(request.user, fromNdjson(request.ndjson));
      case 'cut':
        // Seals each part (footer, fsync): what comes after goes to new parts.
        this.streams.records.cut();
        this.streams.changes.cut();
        return;
      case 'commit':
        // Renames the parts sealed by the last cut into their partitions; the caller holds the commit lock.
        this.streams.records.commit();
        this.streams.changes.commit();
    }
  }

  /**
   * A user's records, with who they were fetched for and when; on a --full-every night between
   * whole ones, `fetched_since` too: the since they were asked with (what came since, not the
   * whole list: `sgq history --dataset` reads such a run as a partial snapshot).
   */
  private addRecords({ user, since }: { user: string | null; since?: string }, records: readonly JsonObject[]): void {
    // Columns of one value for the request's records, a record's own field kept: nothing is
    // added to a record nor copied (adding these to each record was a tenth of the nightly job's CPU).
    const constants: Record<string, Json> = { query_user: user, fetched_at: this.setup.startedAt };
    if (since !== undefined) constants[FETCHED_SINCE] = since;
    this.streams.records.add(records, constants);
  }

  private addChanges(user: string | null, records: JsonObject[]): void {
    const observedAt = this.setup.startedAt;
    this.streams.changes.add(records.map((r) => ({ change: r.change ?? null, ...r, query_user: user, observed_at: observedAt })));
  }
}

/** The records the run wrote of a page: its body read by the same rule as readPage, cut to the granted count. */
export function grantedRecords({ text, granted, wholeBodyIsRecord, lossless, keptTokens }: PageText): JsonObject[] {
  // The run's own parse found every number exact as a double (JSON.parse), or said which it
  // kept as text: the text is not scanned and parsed twice again (the second parse of a page).
  const body = !lossless ? (JSON.parse(text) as Json) : keptTokens ? parseKept(text, keptTokens) : parseJson(text);
  if (!isObject(body)) throw new Error('a page body that is not an object reached the dataset');
  const { records } = pageRecords(body, wholeBodyIsRecord);
  return granted < records.length ? records.slice(0, granted) : records;
}

function fromNdjson(ndjson: string): JsonObject[] {
  return ndjson.split('\n').flatMap((line) => (line === '' ? [] : [parseJson(line) as JsonObject]));
}

function failureOf(error: unknown): WriterFailure {
  const { code, message, path } = error as NodeJS.ErrnoException;
  return { code: typeof code === 'string' ? code : undefined, message: String(message ?? error), ...(typeof path === 'string' ? { path } : {}) };
}
