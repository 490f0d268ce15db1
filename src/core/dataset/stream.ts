import { join } from 'node:path';
import type { JsonObject } from '../classify.js';
import { moveIntoPlace } from '../../fs/atomic.js';
import { dateSegment, partName, routeSegment, type DatasetLayout, type Kind } from './layout.js';
import { PartWriter, type SealedPart } from './part.js';
import type { ParquetOptions, RowConstants } from '../../parquet/parquet-writer.js';
import { removeFile } from '../../fs/remove.js';

/** Where one run's files of one kind go: the route and the day of the run's start (UTC). */
export interface StreamPlace {
  layout: DatasetLayout;
  kind: Kind;
  route: string;
  date: string;
  runId: string;
}

/**
 * One run's files of one kind (records or changes): the part being written, the parts sealed
 * since the last commit, and how many parts the run has named. A record bringing a column
 * after the first row group has set the columns seals the part and starts another, so a field
 * the service adds mid-run still becomes a column.
 */
export class DatasetStream {
  private part?: PartWriter;
  private readonly sealed: SealedPart[] = [];
  private named = 0;
  /** How many of the sealed parts (the first ones) the last cut covers: what the next commit renames. */
  private cutAt = 0;

  constructor(
    private readonly place: StreamPlace,
    /** The declared columns of the route and kind, and where warnings go (each said once a run). */
    private readonly columns: Pick<ParquetOptions, 'declared' | 'warn' | 'said'>,
  ) {}

  /** Opens the first part now: its temporary file proves the folder can be written. */
  open(): PartWriter {
    this.part ??= new PartWriter(this.place.layout, this.columns);
    return this.part;
  }

  get pending(): boolean {
    return this.sealed.length > 0 || (this.part?.rows ?? 0) > 0;
  }

  /** Records, read and never changed, with the values every one of them gets (`constants`, as if each carried them). */
  add(records: readonly JsonObject[], constants?: RowConstants): void {
    if (records.length === 0) return;
    let part = this.open();
    // A record bringing a key the part's columns lack ends the part: the next one takes it (a new part always takes a record).
    for (let from = part.write(records, 0, constants); from < records.length; from = part.write(records, from, constants)) {
      this.sealed.push(part.seal());
      this.part = part = new PartWriter(this.place.layout, this.columns);
    }
  }

  /** Seals the part in progress: the parts sealed so far are those the next commit renames. */
  cut(): void {
    if (this.part && this.part.rows > 0) {
      const part = this.part;
      this.part = undefined;
      this.sealed.push(part.seal());
    }
    this.cutAt = this.sealed.length;
  }

  /** Renames the parts the last cut sealed into the partition; the caller holds the commit lock. Parts sealed since wait. */
  commit(): void {
    if (this.cutAt === 0) return;
    const { layout, kind, route, date, runId } = this.place;
    const folder = join(layout.ensure(kind), routeSegment(route), dateSegment(date));
    layout.makeFolder(folder);
    for (; this.cutAt > 0; this.cutAt--) {
      const part = this.sealed[0]!;
      moveIntoPlace(part.temp, join(folder, partName(runId, ++this.named)));
      this.sealed.shift();
    }
  }

  /** Forgets what is not committed: the part in progress and the sealed ones. */
  drop(): void {
    this.part?.discard();
    this.part = undefined;
    this.cutAt = 0;
    for (const part of this.sealed.splice(0)) removeFile(part.temp);
  }
}
