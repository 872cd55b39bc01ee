// The memory store's change log, one per database (docs/contracts.md §3). A change is recorded
// in the same synchronous step as the write it describes, and its journal line is the write's
// own line (a `feed` marker on it), so the two are durable together or not at all; replaying
// the journal rebuilds the log. Stored documents are never changed in place (a write stores a
// new object), so the before and after images are the stored objects themselves, not copies.
import { formatPosition, newEpoch, parsePosition, type Retention } from "../change-log.ts";
import type { ChangeOperation, ChangeRead, ChangeRecord, Doc } from "../types.ts";

/** What a journal line of a recorded write carries: where its changes begin in the log. */
export interface FeedMarker {
  epoch: string;
  /** The sequence number of the line's first change; the others follow it. */
  seq: number;
  at: Date;
  /** A `replace` line written by updateOne. */
  update?: true;
}

export interface MemoryChange {
  seq: number;
  coll: string;
  op: ChangeOperation;
  id: unknown;
  before: Doc | null;
  after: Doc | null;
  at: Date;
}

/** The log as a compacted journal keeps it (the `changes` record). */
export interface LogState {
  epoch: string;
  seq: number;
  records: MemoryChange[];
}

export class MemoryChangeLog {
  /** Collections whose writes are recorded. */
  readonly recorded = new Set<string>();
  /** The newest change's sequence number (0: none yet). */
  seq: number;
  /** Changes up to here are durable and may be read. */
  private committed: number;
  private records: MemoryChange[];
  /** Index of the first kept change in `records` (dropping from the front without shifting every time). */
  private first = 0;

  constructor(
    readonly epoch: string = newEpoch(),
    state?: Omit<LogState, "epoch">,
  ) {
    this.seq = this.committed = state?.seq ?? 0;
    this.records = state?.records ?? [];
  }

  /** The marker of a write about to be recorded (nothing is taken until `append`). */
  marker(update?: boolean): FeedMarker {
    return { epoch: this.epoch, seq: this.seq + 1, at: new Date(), ...(update ? { update: true } : {}) };
  }

  /** Adds a write's changes, numbered from its marker; `durable` false until its journal line is on disk. */
  append(marker: FeedMarker, changes: Array<Omit<MemoryChange, "seq" | "at">>, retention: Retention, durable: boolean): void {
    let seq = marker.seq;
    for (const change of changes) this.records.push({ seq: seq++, coll: change.coll, op: change.op, id: change.id, before: change.before, after: change.after, at: marker.at });
    this.seq = seq - 1;
    if (durable) this.committed = this.seq;
    this.trim(retention);
  }

  /** The journal line of the write that ends at `seq` is on disk. */
  commit(seq: number): void {
    if (seq > this.committed) this.committed = seq;
  }

  head(): string {
    return formatPosition(this.epoch, this.committed);
  }

  read(after: string, limit: number, retention: Retention): ChangeRead {
    const seq = parsePosition(after, this.epoch, this.committed);
    this.trim(retention);
    const oldest = this.first < this.records.length ? this.records[this.first]!.seq : this.seq + 1;
    if (seq < oldest - 1) return { expired: true, head: this.head() };
    const out: ChangeRecord[] = [];
    // Sequence numbers are consecutive from `oldest`, so the first one after `seq` is found by arithmetic.
    for (let i = this.first + (seq + 1 - oldest); i < this.records.length && out.length < limit; i++) {
      const change = this.records[i]!;
      if (change.seq > this.committed) break;
      out.push({ position: formatPosition(this.epoch, change.seq), collection: change.coll, op: change.op, id: change.id, before: change.before, after: change.after, at: change.at });
    }
    return { expired: false, records: out };
  }

  /** More of a compacted log's changes, read from the journal. */
  restore(records: MemoryChange[]): void {
    for (const record of records) this.records.push(record);
  }

  /** What a compacted journal keeps of the log. */
  state(): LogState {
    return { epoch: this.epoch, seq: this.seq, records: this.records.slice(this.first) };
  }

  private trim(retention: Retention): void {
    let first = this.first;
    const length = this.records.length;
    if (retention.count !== null && length - first > retention.count) first = length - retention.count;
    if (retention.seconds !== null && first < length) {
      const since = Date.now() - retention.seconds * 1000;
      while (first < length && this.records[first]!.at.getTime() < since) first++;
    }
    if (first === this.first) return;
    this.first = first;
    // Compacted once the dropped part outweighs the kept one, so trimming stays amortised O(1).
    if (first > 1024 && first * 2 > length) {
      this.records = this.records.slice(first);
      this.first = 0;
    }
  }
}
