// The native driver: the contract mapped onto the official `mongodb` package. Documents are
// already BSON values (ObjectId, Date, Decimal128), so they pass through unconverted, with one
// care: the mongodb package is CommonJS and loads bson's CommonJS build, whose classes are not
// the ones everest (an ES module) imports, so `instanceof ObjectId` would fail on what it
// returns. Results are therefore fetched as raw BSON and decoded with everest's bson.
import { deserialize, ObjectId } from "bson";
import {
  GridFSBucket,
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  type Collection,
  type Db,
  type MongoClientOptions,
} from "mongodb";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { finished, pipeline } from "node:stream/promises";
import {
  DuplicateKeyError,
  type Change,
  RATE_LIMIT_COLLECTION,
  type Doc,
  type Driver,
  type Filter,
  type FindQuery,
  type IndexSpec,
  type MediaFile,
  type MediaStore,
  type ModifyManyOptions,
  type ModifyOptions,
  type Target,
  type Update,
} from "../types.ts";
import { nearAsWithin } from "../near-count.ts";
import { DUPLICATE_KEY_CODES, translateError } from "./errors.ts";
import { findOneAndUpdate, updateMany } from "./modify.ts";

/** IndexOptionsConflict and IndexKeySpecsConflict: an index of that name or key exists with other options. */
const INDEX_CONFLICT_CODES = new Set([85, 86]);
/** GridFS's default bucket, the one Eve's GridFSMediaStorage uses. */
const BUCKET = "fs";

export interface MongoDriverOptions {
  uri: string;
  /** The database a Target without `database` refers to. */
  databaseName: string;
  client?: MongoClientOptions;
}

/** Documents fetched with `raw: true` (the mongodb package types them as documents, they are BSON bytes). */
function decodeAll(raw: unknown[]): Doc[] {
  return raw.map((bytes) => deserialize(bytes as Uint8Array));
}

async function run<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw translateError(error);
  }
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

/** Node stream → web stream, so a download can start before the whole file is read. */
function webStream(source: Readable): ReadableStream<Uint8Array> {
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      } catch (error) {
        controller.error(translateError(error));
      }
    },
    async cancel() {
      await chunks.return?.();
    },
  });
}

export class MongoDriver implements Driver {
  readonly kind = "mongodb";
  private connecting: Promise<MongoClient> | null = null;
  private hasTransactions: Promise<boolean> | null = null;
  private closed = false;
  private rateLimitIndex?: Promise<unknown>;

  constructor(private readonly options: MongoDriverOptions) {}

  async find(target: Target, query: FindQuery): Promise<Doc[]> {
    const collection = await this.collection(target);
    const raw = await run(() =>
      collection
        .find(query.filter, {
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

  async insertMany(target: Target, docs: Doc[]): Promise<void> {
    if (docs.length === 0) return;
    for (const doc of docs) if (doc._id === undefined) doc._id = new ObjectId();
    const collection = await this.collection(target);
    try {
      await collection.insertMany(docs, { ordered: true });
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
  }

  async replaceOne(target: Target, filter: Filter, doc: Doc): Promise<boolean> {
    const collection = await this.collection(target);
    const result = await run(() => collection.replaceOne(filter, doc));
    return result.matchedCount > 0;
  }

  async updateOne(target: Target, filter: Filter, update: Update): Promise<boolean> {
    const collection = await this.collection(target);
    // MongoDB refuses an update without operators, where the contract means "change nothing".
    const operators = Object.fromEntries(Object.entries(update).filter(([, fields]) => fields && Object.keys(fields).length > 0));
    if (Object.keys(operators).length === 0) {
      return (await run(() => collection.findOne(filter, { projection: { _id: 1 } }))) !== null;
    }
    const result = await run(() => collection.updateOne(filter, operators));
    return result.matchedCount > 0;
  }

  async findOneAndUpdate(target: Target, filter: Filter, update: Update, options: ModifyOptions = {}): Promise<Change | null> {
    return findOneAndUpdate(await this.collection(target), filter, update, options);
  }

  async updateMany(target: Target, filter: Filter, update: Update, options: ModifyManyOptions = {}): Promise<Change[]> {
    const collection = await this.collection(target);
    return updateMany(await this.client(), collection, await this.transactions(), filter, update, options);
  }

  async deleteOne(target: Target, filter: Filter): Promise<boolean> {
    const collection = await this.collection(target);
    const result = await run(() => collection.deleteOne(filter));
    return result.deletedCount > 0;
  }

  async deleteMany(target: Target, filter: Filter, options: { ids?: unknown[] } = {}): Promise<number> {
    const collection = await this.collection(target);
    const result = await run(() => collection.deleteMany(options.ids ? { $and: [filter, { _id: { $in: options.ids } }] } : filter));
    return result.deletedCount;
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
        // The settings changed an index: the new definition replaces the old, as Eve does.
        const existing = await run(() => collection.indexes());
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
    const db = () => this.db(database);
    return {
      put: async (data, meta) => {
        const bucket = new GridFSBucket(await db(), { bucketName: BUCKET });
        return run(async () => {
          const upload = bucket.openUploadStream(meta.filename ?? "", {
            metadata: { contentType: meta.contentType ?? "application/octet-stream", ...(meta.resource ? { resource: meta.resource } : {}) },
          });
          // pipeline, not pipe: a failing upload stream must fail the put, not leave it waiting.
          if (data instanceof Uint8Array) {
            upload.end(data);
            await finished(upload);
          } else await pipeline(Readable.fromWeb(data.stream() as NodeReadableStream), upload);
          return upload.id.toHexString();
        });
      },
      get: async (id) => {
        if (!ObjectId.isValid(id) || id.length !== 24) return null;
        const bucket = new GridFSBucket(await db(), { bucketName: BUCKET });
        const _id = new ObjectId(id);
        const file = await run(() => bucket.find({ _id }, { limit: 1 }).next());
        if (!file) return null;
        // Files written by Eve (pymongo's gridfs) keep the type at the top level.
        const legacyType = (file as { contentType?: unknown }).contentType;
        const contentType = file.metadata?.contentType ?? (typeof legacyType === "string" ? legacyType : "application/octet-stream");
        const media: MediaFile = {
          id,
          ...(file.filename ? { filename: file.filename } : {}),
          contentType: String(contentType),
          length: file.length,
          uploadDate: file.uploadDate,
          read: (range) => webStream(bucket.openDownloadStream(_id, range ? { start: range.start, end: range.end + 1 } : {})),
        };
        return media;
      },
      delete: async (id) => {
        if (!ObjectId.isValid(id) || id.length !== 24) return;
        const handle = await db();
        const _id = new ObjectId(id);
        // The file document first: once it is gone the file is gone for readers, whatever happens to the chunks.
        await run(() => handle.collection(`${BUCKET}.files`).deleteOne({ _id }));
        await run(() => handle.collection(`${BUCKET}.chunks`).deleteMany({ files_id: _id }));
      },
    };
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
