// The mongodb driver's change log (docs/contracts.md §3, docs/drivers.md): a change collection,
// `_everest_changes`, in each database, written by the driver right after each write it records.
// This is not atomic with the write: MongoDB offers that only as a multi-document transaction,
// which needs a replica set. A process that dies between its write and the record loses that
// change from the feed (the data itself is written); docs/feed.md says so.
//
// Numbers come from a counter document in `_everest_feed` (which also holds the log's epoch),
// taken before the record is inserted, so two writers can insert their records out of order for
// a moment: a reader never reads past a missing number (a gap) until GAP_GRACE has passed since
// the record after it was written, and then takes the number as lost.
//
// That is for a standalone server. On a replica set or a sharded cluster the log is MongoDB's
// own change streams instead (change-streams.ts): atomic with the write, and nothing to write.
import type { Db } from "mongodb";
import { formatPosition, newEpoch, parsePosition, retainedSince, Watchers, type Retention } from "../change-log.ts";
import type { ChangeLog, ChangeOperation, ChangeRead, ChangeRecord, Doc, Target } from "../types.ts";
import { ChangeStreamLog } from "./change-streams.ts";
import { run } from "./errors.ts";
import { ownBson } from "./own-bson.ts";

const CHANGES = "_everest_changes";

/** A record of the change collection, numbered by `_id`. */
interface Row {
  _id: number;
  [field: string]: unknown;
}
const FEED = "_everest_feed";
/** How long a reader waits for a number taken but not yet written before it takes it as lost. */
export const GAP_GRACE_MS = 5_000;
/** Recorded writes between two trims of the log by the writer (reads trim too). */
const TRIM_EVERY = 64;

export interface PendingChange {
  op: ChangeOperation;
  before: Doc | null;
  after: Doc | null;
}

export class MongoChangeLog implements ChangeLog {
  /** Other processes' writes are found by polling the change collection. */
  readonly pushes = false;
  private readonly recorded = new Set<string>();
  private readonly watchers = new Watchers();
  private writes = 0;
  /** On a replica set or sharded cluster, the server's change streams (change-streams.ts) instead of the change collection. */
  private deployment: Promise<ChangeStreamLog | null> | null = null;

  constructor(
    private readonly db: (name?: string) => Promise<Db>,
    private readonly defaultDatabase: string,
    private readonly retention: Retention,
  ) {}

  // The contract's errors (./errors.ts), as the driver's own methods throw them: an unreachable
  // server is DatabaseUnavailableError (a 503), for a feed's stream as for any read.
  record(target: Target): Promise<void> {
    return run(() => this.recordNow(target));
  }

  head(database?: string): Promise<string> {
    return run(() => this.headNow(database));
  }

  read(database: string | undefined, after: string, limit: number): Promise<ChangeRead> {
    return run(() => this.readNow(database, after, limit));
  }

  /** Records a write's changes, numbered in one step, and wakes this process's streams. */
  write(target: Target, changes: PendingChange[]): Promise<void> {
    return run(() => this.writeNow(target, changes));
  }

  private async recordNow(target: Target): Promise<void> {
    const streams = await this.streams();
    if (streams) return streams.record(target);
    const db = target.database ?? this.defaultDatabase;
    await this.state(db);
    this.recorded.add(`${db}\u0000${target.collection}`);
  }

  isRecorded(target: Target): boolean {
    return this.recorded.has(`${target.database ?? this.defaultDatabase}\u0000${target.collection}`);
  }

  private async headNow(database?: string): Promise<string> {
    const streams = await this.streams();
    if (streams) return streams.head(database);
    const { epoch, seq } = await this.state(database ?? this.defaultDatabase);
    return formatPosition(epoch, seq);
  }

  private async readNow(database: string | undefined, after: string, limit: number): Promise<ChangeRead> {
    const streams = await this.streams();
    if (streams) return streams.read(database, after, limit);
    const db = database ?? this.defaultDatabase;
    const { epoch, seq: head } = await this.state(db);
    let seq = parsePosition(after, epoch, head);
    await this.trim(db);
    const changes = (await this.db(db)).collection<Row>(CHANGES);
    const [oldest] = await changes.find({}, { sort: { _id: 1 }, limit: 1, projection: { _id: 1 } }).toArray();
    const first = oldest ? Number(oldest._id) : head + 1;
    if (seq < first - 1) return { expired: true as const, head: formatPosition(epoch, head) };
    const rows = await changes.find({ _id: { $gt: seq } }, { sort: { _id: 1 }, limit }).toArray();
    const records: ChangeRecord[] = [];
    const settled = Date.now() - GAP_GRACE_MS;
    for (const raw of rows) {
      const row = ownBson(raw);
      const number = Number(row._id);
      if (number !== seq + 1 && (row.at as Date).getTime() > settled) break;
      seq = number;
      const before = (row.before as Doc | null) ?? null;
      const after = (row.after as Doc | null) ?? null;
      records.push({ position: formatPosition(epoch, number), collection: String(row.coll), op: row.op as ChangeOperation, id: (after ?? before)!._id, before, after, at: row.at as Date });
    }
    return { expired: false as const, records };
  }

  watch(database: string | undefined, wake: () => void): () => void {
    return this.watchers.add(database ?? this.defaultDatabase, wake);
  }

  private async writeNow(target: Target, changes: PendingChange[]): Promise<void> {
    if (changes.length === 0) return;
    const db = target.database ?? this.defaultDatabase;
    const handle = await this.db(db);
    const take = () => handle.collection<{ _id: string; seq: number }>(FEED).findOneAndUpdate({ _id: "log" }, { $inc: { seq: changes.length } }, { returnDocument: "after" });
    let counter = await take();
    if (!counter) {
      // The log was dropped (its collection, or the database) while this process ran.
      await this.state(db);
      counter = await take();
    }
    const last = Number(counter!.seq);
    const at = new Date();
    const first = last - changes.length + 1;
    await handle.collection<Row>(CHANGES).insertMany(changes.map((change, i) => ({ _id: first + i, coll: target.collection, op: change.op, before: change.before, after: change.after, at })));
    this.watchers.notify(db);
    if (++this.writes % TRIM_EVERY === 0) this.trim(db).catch(() => undefined);
  }

  /** Whether the deployment has change streams: a replica set (`setName`) or mongos (`isdbgrid`). */
  private streams(): Promise<ChangeStreamLog | null> {
    if (!this.deployment) {
      const deployment = (async () => {
        const hello = await (await this.db()).admin().command({ hello: 1 });
        return hello.setName || hello.msg === "isdbgrid" ? new ChangeStreamLog(this.db, this.defaultDatabase) : null;
      })();
      deployment.catch(() => {
        if (this.deployment === deployment) this.deployment = null;
      });
      this.deployment = deployment;
    }
    return this.deployment;
  }

  /**
   * The log's epoch and last number, read each time (one read, as the number alone was): the log
   * is made here when missing, also when it was dropped while processes ran. Then it starts
   * under a new epoch, so no client's position in the old numbering is taken for one in the new,
   * and from the change collection's last number, which the new records must not collide with.
   */
  private async state(db: string): Promise<{ epoch: string; seq: number }> {
    const handle = await this.db(db);
    const feed = handle.collection<{ _id: string; epoch: string; seq: number }>(FEED);
    let log = await feed.findOne({ _id: "log" });
    if (!log) {
      const [newest] = await handle.collection<Row>(CHANGES).find({}, { sort: { _id: -1 }, limit: 1, projection: { _id: 1 } }).toArray();
      await feed.updateOne({ _id: "log" }, { $setOnInsert: { epoch: newEpoch(), seq: newest ? Number(newest._id) : 0 } }, { upsert: true });
      log = await feed.findOne({ _id: "log" });
    }
    return { epoch: String(log!.epoch), seq: Number(log!.seq) };
  }

  private async trim(db: string): Promise<void> {
    const changes = (await this.db(db)).collection<Row>(CHANGES);
    const { count } = this.retention;
    const since = retainedSince(this.retention);
    if (count !== null) await changes.deleteMany({ _id: { $lte: (await this.state(db)).seq - count } });
    if (since) await changes.deleteMany({ at: { $lt: since } });
  }
}
