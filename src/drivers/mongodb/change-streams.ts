// The mongodb driver's change log on a replica set or a sharded cluster: MongoDB's own change
// streams, which the server writes in the same step as the write (its oplog), whoever wrote.
// The driver writes nothing more: the recorded collections get pre- and post-images
// (`changeStreamPreAndPostImages`, MongoDB 6.0 and later), so an update's event carries the
// document before and after it. A position is the change's resume token (`cs.<token>`); the log
// keeps what the oplog keeps (its window, not CHANGE_FEED_RETENTION), and a token older than
// that reads as expired. Streams read the log by polling (`pushes` false), each read a change
// stream resumed after the position and closed again; nothing wakes a reader early, so the delay
// is the poll interval for this process's writes too.
//
// Not tested here: the MongoDB emulator the tests use is a standalone server, where
// MongoChangeLog (changes.ts) uses its change collection instead (docs/feed.md).
import { MongoServerError, type ChangeStreamDocument, type Db } from "mongodb";
import { DatabaseUnavailableError, InvalidPositionError, type ChangeLog, type ChangeOperation, type ChangeRead, type ChangeRecord, type Doc, type Target } from "../types.ts";
import { ownBson } from "./own-bson.ts";

/** InvalidResumeToken, and the codes of a token from another deployment or a malformed one. */
const INVALID_TOKEN_CODES = new Set([260, 9, 22]);
/** ChangeStreamHistoryLost: the oplog no longer holds the position. */
const HISTORY_LOST = 286;
const OPERATIONS = new Set(["insert", "update", "replace", "delete"]);

function token(position: string): { _data: string } {
  const match = /^cs\.([0-9A-Fa-f]{2,4096})$/.exec(position);
  if (!match) throw new InvalidPositionError(`'${position.slice(0, 40)}' is not a change-feed position`);
  return { _data: match[1]! };
}

const positionOf = (resumeToken: unknown): string => `cs.${(resumeToken as { _data: string })._data}`;

export class ChangeStreamLog implements ChangeLog {
  readonly pushes = false;
  private readonly recorded = new Map<string, Set<string>>();

  constructor(
    private readonly db: (name?: string) => Promise<Db>,
    private readonly defaultDatabase: string,
  ) {}

  /** Turns pre- and post-images on for the collection (created with them if it does not exist yet). */
  async record(target: Target): Promise<void> {
    const name = target.database ?? this.defaultDatabase;
    const db = await this.db(name);
    const exists = (await db.listCollections({ name: target.collection }, { nameOnly: true }).toArray()).length > 0;
    try {
      if (exists) await db.command({ collMod: target.collection, changeStreamPreAndPostImages: { enabled: true } });
      else await db.createCollection(target.collection, { changeStreamPreAndPostImages: { enabled: true } });
    } catch (error) {
      throw new Error(`change_feed on '${target.collection}': MongoDB refused pre- and post-images (MongoDB 6.0 or later, and the collMod privilege): ${(error as Error).message}`, { cause: error });
    }
    let collections = this.recorded.get(name);
    if (!collections) this.recorded.set(name, (collections = new Set()));
    collections.add(target.collection);
  }

  async head(database?: string): Promise<string> {
    const stream = await this.open(database ?? this.defaultDatabase, {});
    try {
      await stream.tryNext();
      return positionOf(stream.resumeToken);
    } finally {
      await stream.close();
    }
  }

  async read(database: string | undefined, after: string, limit: number): Promise<ChangeRead> {
    const db = database ?? this.defaultDatabase;
    const stream = await this.open(db, { resumeAfter: token(after) });
    const records: ChangeRecord[] = [];
    try {
      while (records.length < limit) {
        const change = await stream.tryNext();
        if (!change) break;
        const record = this.change(change);
        if (record) records.push(record);
      }
    } catch (error) {
      if (error instanceof MongoServerError && Number(error.code) === HISTORY_LOST) return { expired: true, head: await this.head(db) };
      if (error instanceof MongoServerError && INVALID_TOKEN_CODES.has(Number(error.code))) throw new InvalidPositionError(`'${after.slice(0, 40)}' is not a position of this deployment's change streams`);
      throw new DatabaseUnavailableError(`reading the change stream failed: ${(error as Error).message}`, { cause: error });
    } finally {
      await stream.close();
    }
    return { expired: false, records };
  }

  /** Nothing wakes a reader early: this process's writes too are found by the next poll. */
  watch(): () => void {
    return () => undefined;
  }

  private async open(name: string, options: { resumeAfter?: { _data: string } }) {
    const collections = [...(this.recorded.get(name) ?? [])];
    const db = await this.db(name);
    return db.watch([{ $match: { "ns.coll": { $in: collections }, operationType: { $in: [...OPERATIONS] } } }], {
      ...options,
      fullDocument: "whenAvailable",
      fullDocumentBeforeChange: "whenAvailable",
      maxAwaitTimeMS: 1,
    });
  }

  private change(raw: ChangeStreamDocument): ChangeRecord | null {
    const change = ownBson(raw) as Doc & { operationType: string; ns: { coll: string }; documentKey: { _id: unknown } };
    if (!OPERATIONS.has(change.operationType)) return null;
    const after = (change.fullDocument as Doc | null | undefined) ?? null;
    const before = (change.fullDocumentBeforeChange as Doc | null | undefined) ?? null;
    const wall = change.wallTime instanceof Date ? change.wallTime : new Date();
    return {
      position: positionOf(raw._id),
      collection: change.ns.coll,
      op: change.operationType as ChangeOperation,
      id: change.documentKey._id,
      before,
      after: change.operationType === "delete" ? null : after,
      at: wall,
    };
  }
}
