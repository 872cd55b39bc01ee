// The native driver: the contract mapped onto the official `mongodb` package. Documents are
// already BSON values (ObjectId, Date, Decimal128), so they pass through unconverted, with one
// care: the mongodb package is CommonJS and loads bson's CommonJS build, whose classes are not
// the ones everest (an ES module) imports, so `instanceof ObjectId` would fail on what it
// returns. Results are therefore fetched as raw BSON and decoded with everest's bson.
import { deserialize, ObjectId } from "bson";
import {
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  type Collection,
  type Db,
  type MongoClientOptions,
} from "mongodb";
import {
  DuplicateKeyError,
  type Change,
  RATE_LIMIT_COLLECTION,
  type Doc,
  type Driver,
  type Filter,
  type FindQuery,
  type IndexSpec,
  type MediaStore,
  type ModifyManyOptions,
  type ModifyOptions,
  type Target,
  type Update,
} from "../types.ts";
import { nearAsWithin } from "../near-count.ts";
import { withKeyset } from "../keyset-filter.ts";
import { retentionOf, type Retention } from "../change-log.ts";
import { MongoChangeLog } from "./changes.ts";
import { ownBson, sameDocument } from "./own-bson.ts";
import { DUPLICATE_KEY_CODES, run, translateError } from "./errors.ts";
import { gridFsMedia } from "./media.ts";
import { withInt64s } from "./int64.ts";
import { findOneAndUpdate, PartlyWritten, updateMany } from "./modify.ts";

/** IndexOptionsConflict and IndexKeySpecsConflict: an index of that name or key exists with other options. */
const INDEX_CONFLICT_CODES = new Set([85, 86]);

export interface MongoDriverOptions {
  uri: string;
  /** The database a Target without `database` refers to. */
  databaseName: string;
  client?: MongoClientOptions;
  /** How long the change log keeps changes (src/drivers/change-log.ts's defaults when absent). */
  retention?: Retention;
}

/** Documents fetched with `raw: true` (the mongodb package types them as documents, they are BSON bytes). */
function decodeAll(raw: unknown[]): Doc[] {
  return raw.map((bytes) => deserialize(bytes as Uint8Array));
}

function valueAt(doc: Doc, path: string): unknown {
  let value: unknown = doc;
  for (const segment of path.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Doc)[segment];
  }
  return value;
}

function defaultIndexName(spec: IndexSpec): string {
  return spec.name ?? spec.keys.map(([field, direction]) => `${field}_${direction}`).join("_");
}

function sameKeys(key: Record<string, unknown>, keys: IndexSpec["keys"]): boolean {
  const entries = Object.entries(key);
  return entries.length === keys.length && entries.every(([field, direction], i) => keys[i]![0] === field && keys[i]![1] === direction);
}

export class MongoDriver implements Driver {
  readonly kind = "mongodb";
  private connecting: Promise<MongoClient> | null = null;
  private hasTransactions: Promise<boolean> | null = null;
  private closed = false;
  private rateLimitIndex?: Promise<unknown>;
  readonly changes: MongoChangeLog;

  constructor(private readonly options: MongoDriverOptions) {
    this.changes = new MongoChangeLog((name) => this.db(name), options.databaseName, options.retention ?? retentionOf({}));
  }

  async find(target: Target, query: FindQuery): Promise<Doc[]> {
    const collection = await this.collection(target);
    const raw = await run(() =>
      collection
        .find(withKeyset(query.filter, query.sort, query.after), {
          raw: true,
          ...(query.sort?.length ? { sort: query.sort } : {}),
          ...(query.projection && Object.keys(query.projection).length > 0 ? { projection: query.projection } : {}),
          ...(query.skip && query.skip > 0 ? { skip: query.skip } : {}),
          ...(query.limit && query.limit > 0 ? { limit: query.limit } : {}),
        })
        .toArray(),
    );
    return decodeAll(raw);
  }

  async count(target: Target, filter: Filter): Promise<number> {
    const collection = await this.collection(target);
    return run(() => collection.countDocuments(nearAsWithin(filter)));
  }

  async estimatedCount(target: Target): Promise<number> {
    const collection = await this.collection(target);
    return run(() => collection.estimatedDocumentCount());
  }

  async insertMany(target: Target, docs: Doc[]): Promise<void> {
    if (docs.length === 0) return;
    for (const doc of docs) if (doc._id === undefined) doc._id = new ObjectId();
    const collection = await this.collection(target);
    try {
      await collection.insertMany(docs.map(withInt64s), { ordered: true });
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError)) throw translateError(error);
      // Ordered: everything before the first rejected document went in, nothing after it did.
      const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
      const rejected = writeErrors[0];
      const failed = rejected?.index ?? docs.length;
      const duplicate =
        rejected && DUPLICATE_KEY_CODES.has(rejected.code)
          ? new DuplicateKeyError(await this.duplicateKeyValue(collection, rejected.errmsg ?? "", docs[failed] ?? {}), rejected.errmsg)
          : null;
      const inserted = docs.slice(0, failed).map((doc) => doc._id);
      const batch: Filter = { _id: { $in: inserted } };
      if (inserted.length > 0) await run(() => collection.deleteMany(batch));
      throw duplicate ?? translateError(error);
    }
    if (this.changes.isRecorded(target)) await run(() => this.changes.write(target, docs.map((doc) => ({ op: "insert", before: null, after: doc }))));
  }

  // A recorded collection's writes read the document they change as they change it
  // (findOneAnd…), for the change log's before image; the others keep the plain commands.

  async replaceOne(target: Target, filter: Filter, doc: Doc): Promise<boolean> {
    const collection = await this.collection(target);
    if (this.changes.isRecorded(target)) {
      const found = await run(() => collection.findOneAndReplace(filter, withInt64s(doc), { returnDocument: "before" }));
      if (!found) return false;
      const before = ownBson(found);
      const { _id: _ignored, ...fields } = doc;
      await run(() => this.changes.write(target, [{ op: "replace", before, after: { _id: before._id, ...fields } }]));
      return true;
    }
    const result = await run(() => collection.replaceOne(filter, withInt64s(doc)));
    return result.matchedCount > 0;
  }

  async updateOne(target: Target, filter: Filter, update: Update): Promise<boolean> {
    const collection = await this.collection(target);
    // MongoDB refuses an update without operators, where the contract means "change nothing".
    const operators = Object.fromEntries(Object.entries(update).filter(([, fields]) => fields && Object.keys(fields).length > 0));
    if (Object.keys(operators).length === 0) {
      return (await run(() => collection.findOne(filter, { projection: { _id: 1 } }))) !== null;
    }
    if (this.changes.isRecorded(target)) {
      const found = await run(() => collection.findOneAndUpdate(filter, withInt64s(operators), { returnDocument: "before" }));
      if (!found) return false;
      const before = ownBson(found);
      // Read back rather than worked out here, so the image is what the server made of the operators.
      const [after] = decodeAll(await run(() => collection.find({ _id: before._id } as Filter, { raw: true, limit: 1 }).toArray()));
      if (after && !sameDocument(before, after)) await run(() => this.changes.write(target, [{ op: "update", before, after }]));
      return true;
    }
    const result = await run(() => collection.updateOne(filter, withInt64s(operators)));
    return result.matchedCount > 0;
  }

  async findOneAndUpdate(target: Target, filter: Filter, update: Update, options: ModifyOptions = {}): Promise<Change | null> {
    const change = await findOneAndUpdate(await this.collection(target), filter, update, options);
    if (change) await this.recordUpdates(target, [change]);
    return change;
  }

  async updateMany(target: Target, filter: Filter, update: Update, options: ModifyManyOptions = {}): Promise<Change[]> {
    const collection = await this.collection(target);
    let changes: Change[];
    try {
      changes = await updateMany(await this.client(), collection, await this.transactions(), filter, update, options);
    } catch (error) {
      if (!(error instanceof PartlyWritten)) throw error;
      // What a standalone server changed before the failure stays changed: the log says so too.
      await this.recordUpdates(target, error.changes);
      throw error.cause;
    }
    await this.recordUpdates(target, changes);
    return changes;
  }

  /** An atomic update's changes, recorded right after it as the other writes' are (changes.ts). */
  private async recordUpdates(target: Target, changes: Change[]): Promise<void> {
    if (this.changes.isRecorded(target)) await run(() => this.changes.write(target, changes.map(({ before, after }) => ({ op: "update", before, after }))));
  }

  async deleteOne(target: Target, filter: Filter): Promise<boolean> {
    const collection = await this.collection(target);
    if (this.changes.isRecorded(target)) return (await this.deleteRecorded(target, collection, filter)) !== null;
    const result = await run(() => collection.deleteOne(filter));
    return result.deletedCount > 0;
  }

  async deleteMany(target: Target, filter: Filter, options: { ids?: unknown[] } = {}): Promise<number> {
    const collection = await this.collection(target);
    const scoped = options.ids ? { $and: [filter, { _id: { $in: options.ids } }] } : filter;
    if (this.changes.isRecorded(target)) {
      // One by one, so that each deleted document is known as it was when it went.
      const ids = decodeAll(await run(() => collection.find(scoped, { raw: true, projection: { _id: 1 } }).toArray())).map((doc) => doc._id);
      let deleted = 0;
      for (const _id of ids) if (await this.deleteRecorded(target, collection, { $and: [scoped, { _id }] })) deleted++;
      return deleted;
    }
    const result = await run(() => collection.deleteMany(scoped));
    return result.deletedCount;
  }

  private async deleteRecorded(target: Target, collection: Collection<Doc>, filter: Filter): Promise<Doc | null> {
    const found = await run(() => collection.findOneAndDelete(filter));
    if (!found) return null;
    const before = ownBson(found);
    await run(() => this.changes.write(target, [{ op: "delete", before, after: null }]));
    return before;
  }

  async aggregate(target: Target, pipeline: Doc[]): Promise<Doc[]> {
    const collection = await this.collection(target);
    return decodeAll(await run(() => collection.aggregate(pipeline, { raw: true }).toArray()));
  }

  async createIndexes(target: Target, indexes: IndexSpec[]): Promise<void> {
    const collection = await this.collection(target);
    for (const spec of indexes) {
      const name = defaultIndexName(spec);
      const options = { name, ...(spec.unique ? { unique: true } : {}), ...(spec.sparse ? { sparse: true } : {}) };
      const create = () => collection.createIndex(spec.keys, options);
      try {
        await create();
      } catch (error) {
        if (!(error instanceof MongoServerError && INDEX_CONFLICT_CODES.has(Number(error.code)))) throw indexError(translateError(error), spec);
        const existing = await run(() => collection.indexes());
        // An index the order needs is there already, under a name of its own: it serves.
        if (spec.orderOnly && existing.some((index) => sameKeys(index.key, spec.keys))) continue;
        // The settings changed an index: the new definition replaces the old, as Eve does.
        for (const index of existing) {
          if (index.name !== "_id_" && (index.name === name || sameKeys(index.key, spec.keys))) {
            await run(() => collection.dropIndex(index.name!));
          }
        }
        await run(create);
      }
    }
  }

  media(database?: string): MediaStore {
    return gridFsMedia(() => this.db(database));
  }

  /**
   * One document per key and window, counted by an upserting $inc that returns the new count;
   * a TTL index on `expireAt` lets the server drop windows that have ended. Two first hits of a
   * window may race to insert it: the loser's duplicate-key error means it now exists, and the
   * retry counts into it.
   */
  async countHit(key: string, windowEnd: number): Promise<number> {
    const collection = (await this.db()).collection<{ _id: string; count: number; expireAt: Date }>(RATE_LIMIT_COLLECTION);
    this.rateLimitIndex ??= run(() => collection.createIndex({ expireAt: 1 }, { expireAfterSeconds: 0, name: "expireAt_ttl" })).catch((error: unknown) => {
      this.rateLimitIndex = undefined;
      throw error;
    });
    await this.rateLimitIndex;
    const count = () =>
      collection.findOneAndUpdate(
        { _id: `${key}@${windowEnd}` },
        { $inc: { count: 1 }, $setOnInsert: { expireAt: new Date(windowEnd) } },
        { upsert: true, returnDocument: "after", includeResultMetadata: false },
      );
    const counted = await run(() => count().catch((error: unknown) => (error instanceof MongoServerError && DUPLICATE_KEY_CODES.has(error.code as number) ? count() : Promise.reject(error))));
    return Number(counted?.count);
  }

  async ping(): Promise<void> {
    const db = await this.db();
    await run(() => db.command({ ping: 1 }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const client = await this.connecting?.catch(() => null);
    this.connecting = null;
    await client?.close();
  }

  /**
   * The client, connected on first use. A failed first connection leaves the mongodb package's
   * client closed for good, so it is dropped and the next operation starts a new one; once
   * connected, the client itself rides out outages and reconnects.
   */
  private client(): Promise<MongoClient> {
    if (this.closed) return Promise.reject(new Error("the mongodb driver is closed"));
    if (!this.connecting) {
      const client = new MongoClient(this.options.uri, this.options.client);
      const connecting = client.connect().catch(async (error: unknown) => {
        if (this.connecting === connecting) this.connecting = null;
        await client.close().catch(() => undefined);
        throw translateError(error);
      });
      this.connecting = connecting;
    }
    return this.connecting;
  }

  /**
   * Whether the deployment runs transactions: a replica set or a sharded cluster (a standalone
   * server, the emulator among them, refuses them). Asked once per connection.
   */
  private transactions(): Promise<boolean> {
    this.hasTransactions ??= this.db("admin")
      .then((admin) => admin.command({ hello: 1 }))
      .then((hello) => typeof hello.setName === "string" || hello.msg === "isdbgrid");
    this.hasTransactions.catch(() => (this.hasTransactions = null));
    return run(() => this.hasTransactions!);
  }

  private async db(database?: string): Promise<Db> {
    return (await this.client()).db(database ?? this.options.databaseName);
  }

  private async collection(target: Target): Promise<Collection<Doc>> {
    return (await this.db(target.database)).collection<Doc>(target.collection);
  }

  /**
   * A bulk insert's write error carries no keyValue (the mongodb package drops it), so the
   * values come from the rejected document and the key of the index the message names.
   */
  private async duplicateKeyValue(collection: Collection<Doc>, message: string, doc: Doc): Promise<Record<string, unknown>> {
    const name = /index: (\S+) dup key/.exec(message)?.[1];
    let fields: string[] = [];
    if (name === "_id_") fields = ["_id"];
    else if (name) {
      const indexes = await collection.indexes().catch(() => []);
      fields = Object.keys(indexes.find((index) => index.name === name)?.key ?? {});
    }
    return Object.fromEntries(fields.map((field) => [field, valueAt(doc, field)]));
  }
}

/** A unique index the stored documents break names its fields, whether or not the server said which value. */
function indexError(error: unknown, spec: IndexSpec): unknown {
  if (!(error instanceof DuplicateKeyError) || Object.keys(error.keyValue).length > 0) return error;
  return new DuplicateKeyError(Object.fromEntries(spec.keys.map(([field]) => [field, null])), error.message);
}
