// The embedded driver: MongoDB semantics (through mingo) over documents kept in memory, with an
// optional journal that makes every acknowledged write durable.
//
// Every operation does its checking and its change to memory synchronously, before its first
// `await`, so a conditional write (`{_id, _etag}` filter) cannot interleave with another one.
// Only an import may come before: an operation whose filter, update or pipeline needs a module
// not loaded yet (turf for geo operators, aggregation for pipelines and $expr; mingo.ts,
// loadFor) awaits it first, and then does the rest as any other.
import { Binary, ObjectId } from "bson";
import {
  InvalidQueryError,
  type Doc,
  type Driver,
  type FileAccess,
  type Filter,
  type FindQuery,
  type IndexSpec,
  type MediaStore,
  type Target,
  type Update,
} from "../types.ts";
import { Collection, type ScanStats } from "./collection.ts";
import type { Stored } from "./indexes.ts";
import { encodeRecord, Journal, replayJournal, type JournalRecord } from "./journal.ts";
import { mediaFile, type MediaRecord } from "./media.ts";
import { applyUpdate, compileFilter, cursor, loadFor, project, runPipeline, withMingo } from "./mingo.ts";
import { nearDistance } from "./geo.ts";
import { copyDocument, copyValue, valueKey } from "./values.ts";

/** Stages that write collections, which would bypass the store's indexes and journal. */
const WRITING_STAGES = new Set(["$out", "$merge"]);
/** Documents per insert record in a compacted journal, to keep lines reasonably short. */
const SNAPSHOT_BATCH = 1000;

function firstMatch(collection: Collection, filter: Filter, test: (doc: Doc) => boolean): Stored | undefined {
  return withMingo(() => collection.matching(filter, test, true).next().value ?? undefined);
}

interface Database {
  collections: Map<string, Collection>;
  media: Map<string, MediaRecord>;
}

export interface MemoryDriverOptions {
  /** The database a Target without `database` refers to. */
  databaseName: string;
  /** Makes the store durable: the journal at `path` is replayed now and appended to on every write. */
  journal?: { files: FileAccess; path: string };
}

export class MemoryDriver implements Driver {
  readonly kind = "memory";
  readonly stats: ScanStats = { documentsExamined: 0, indexScans: 0, fullScans: 0 };
  private readonly databases = new Map<string, Database>();
  private journal: Journal | null = null;
  private closed = false;

  private constructor(private readonly defaultDatabase: string) {}

  static async open(options: MemoryDriverOptions): Promise<MemoryDriver> {
    const driver = new MemoryDriver(options.databaseName);
    if (options.journal) {
      const { files, path } = options.journal;
      const text = await files.readText(path);
      if (text !== null) {
        const repaired = replayJournal(text, path, (record) => driver.replay(record));
        if (repaired !== null) await files.replaceAtomically(path, repaired);
      }
      driver.journal = new Journal(files, path);
    }
    return driver;
  }

  async find(target: Target, query: FindQuery): Promise<Doc[]> {
    const { test, collection } = await this.open(target, query.filter);
    if (!collection) return [];
    return withMingo(() => {
      const skip = Math.max(0, query.skip ?? 0);
      const limit = query.limit && query.limit > 0 ? query.limit : Infinity;
      let page: Doc[] = [];
      // As in MongoDB, a $near orders the results nearest first unless a sort is given.
      const near = query.sort?.length ? null : nearDistance(query.filter);
      if (query.sort?.length) {
        const matches = Array.from(collection.matching(query.filter, test, true), (stored) => stored.doc);
        const sorted = cursor(matches).sort(Object.fromEntries(query.sort)).skip(skip);
        page = (limit === Infinity ? sorted : sorted.limit(limit)).all();
      } else if (near) {
        const matches = Array.from(collection.matching(query.filter, test, true), ({ doc }) => ({ doc, distance: near(doc) }));
        matches.sort((a, b) => a.distance - b.distance);
        page = matches.slice(skip, limit === Infinity ? undefined : skip + limit).map(({ doc }) => doc);
      } else {
        let skipped = 0;
        for (const { doc } of collection.matching(query.filter, test, true)) {
          if (skipped < skip) skipped++;
          else if (page.push(doc) >= limit) break;
        }
      }
      if (query.projection && Object.keys(query.projection).length > 0) {
        page = project(page, query.projection);
      }
      return page.map(copyDocument);
    });
  }

  async count(target: Target, filter: Filter): Promise<number> {
    const { test, collection } = await this.open(target, filter);
    if (!collection) return 0;
    if (Object.keys(filter).length === 0) return collection.size;
    return withMingo(() => {
      let count = 0;
      for (const _ of collection.matching(filter, test, false)) count++;
      return count;
    });
  }

  async insertMany(target: Target, docs: Doc[]): Promise<void> {
    this.assertUsable();
    if (docs.length === 0) return;
    for (const doc of docs) if (doc._id === undefined) doc._id = new ObjectId();
    const copies = docs.map(copyDocument);
    const db = this.databaseName(target);
    const collection = this.collection(target, true);
    const apply = collection.prepareInsert(copies);
    const line = this.encode(() => ({ op: "insert", db, coll: target.collection, docs: copies }));
    apply();
    await this.commit(line);
  }

  async replaceOne(target: Target, filter: Filter, doc: Doc): Promise<boolean> {
    const { test, collection } = await this.open(target, filter);
    const stored = collection && firstMatch(collection, filter, test);
    if (!collection || !stored) return false;
    const id = stored.doc._id;
    if (doc._id !== undefined && valueKey(doc._id) !== valueKey(id)) throw new InvalidQueryError("the _id of a document cannot change");
    await this.store(target, collection, stored, copyDocument({ ...doc, _id: id }));
    return true;
  }

  async updateOne(target: Target, filter: Filter, update: Update): Promise<boolean> {
    const { test, collection } = await this.open(target, filter, update);
    const stored = collection && firstMatch(collection, filter, test);
    if (!collection || !stored) return false;
    const next = copyDocument(stored.doc);
    const changed = withMingo(() => applyUpdate(next, copyValue(update) as Record<string, unknown>));
    if (valueKey(next._id) !== valueKey(stored.doc._id)) throw new InvalidQueryError("the _id of a document cannot change");
    if (changed.length > 0) await this.store(target, collection, stored, next);
    return true;
  }

  async deleteOne(target: Target, filter: Filter): Promise<boolean> {
    const { test, collection } = await this.open(target, filter);
    const stored = collection && firstMatch(collection, filter, test);
    if (!collection || !stored) return false;
    const line = this.encode(() => ({ op: "delete", db: this.databaseName(target), coll: target.collection, ids: [stored.doc._id] }));
    collection.remove(stored);
    await this.commit(line);
    return true;
  }

  async deleteMany(target: Target, filter: Filter): Promise<number> {
    const { test, collection } = await this.open(target, filter);
    if (!collection) return 0;
    const db = this.databaseName(target);
    if (Object.keys(filter).length === 0) {
      const count = collection.size;
      if (count === 0) return 0;
      const line = this.encode(() => ({ op: "clear", db, coll: target.collection }));
      collection.clear();
      await this.commit(line);
      return count;
    }
    const doomed = withMingo(() => [...collection.matching(filter, test, false)]);
    if (doomed.length === 0) return 0;
    const line = this.encode(() => ({ op: "delete", db, coll: target.collection, ids: doomed.map((stored) => stored.doc._id) }));
    for (const stored of doomed) collection.remove(stored);
    await this.commit(line);
    return doomed.length;
  }

  async aggregate(target: Target, pipeline: Doc[]): Promise<Doc[]> {
    const loading = loadFor({ pipeline });
    if (loading) await loading;
    this.assertUsable();
    for (const stage of pipeline) {
      for (const key of Object.keys(stage)) {
        if (WRITING_STAGES.has(key)) throw new InvalidQueryError(`the ${key} stage is not supported by the memory driver`);
      }
    }
    // A leading $match is answered here, with the indexes, instead of by mingo over everything.
    const [first, ...rest] = pipeline;
    const leading = first?.$match;
    const match = first && Object.keys(first).length === 1 && leading && typeof leading === "object" && !Array.isArray(leading) ? (leading as Filter) : null;
    const test = match ? compileFilter(match) : null;
    const database = this.databases.get(this.databaseName(target));
    return withMingo(() => {
      const collection = database?.collections.get(target.collection);
      let input: Doc[] = [];
      if (collection && match && test) input = Array.from(collection.matching(match, test, true), (s) => copyDocument(s.doc));
      else if (collection) input = Array.from(collection.documents(), (s) => copyDocument(s.doc));
      const others = new Map<string, Doc[]>();
      const collectionResolver = (name: string): Doc[] => {
        let docs = others.get(name);
        if (!docs) {
          const other = database?.collections.get(name);
          docs = other ? Array.from(other.documents(), (s) => copyDocument(s.doc)) : [];
          others.set(name, docs);
        }
        return docs;
      };
      // Inputs are private copies, so whatever the pipeline returns shares nothing with the store.
      return runPipeline(match ? rest : pipeline, input, collectionResolver);
    });
  }

  async createIndexes(target: Target, indexes: IndexSpec[]): Promise<void> {
    this.assertUsable();
    const db = this.databaseName(target);
    const { changed, apply } = this.collection(target, true).prepareIndexes(indexes);
    if (changed.length === 0) return;
    const line = this.encode(() => ({ op: "indexes", db, coll: target.collection, indexes: changed }));
    apply();
    await this.commit(line);
  }

  media(database?: string): MediaStore {
    const db = database ?? this.defaultDatabase;
    return {
      put: async (data, meta) => {
        this.assertUsable();
        const record: MediaRecord = {
          id: new ObjectId().toHexString(),
          contentType: meta.contentType ?? "application/octet-stream",
          uploadDate: new Date(),
          data: data instanceof Uint8Array ? new Uint8Array(data) : new Uint8Array(await data.arrayBuffer()),
          ...(meta.filename !== undefined ? { filename: meta.filename } : {}),
        };
        const line = this.encode(() => ({ op: "media.put", db, file: { ...record, data: new Binary(record.data) } }));
        this.database(db, true).media.set(record.id, record);
        await this.commit(line);
        return record.id;
      },
      get: async (id) => {
        this.assertUsable();
        const record = this.databases.get(db)?.media.get(id);
        return record ? mediaFile(record) : null;
      },
      delete: async (id) => {
        this.assertUsable();
        const media = this.databases.get(db)?.media;
        if (!media?.has(id)) return;
        const line = this.encode(() => ({ op: "media.delete", db, id }));
        media.delete(id);
        await this.commit(line);
      },
    };
  }

  /** Rewrites the journal as the current state, atomically; writes go on meanwhile. */
  async compact(): Promise<void> {
    this.assertUsable();
    if (!this.journal) throw new Error("this memory driver has no journal to compact");
    await this.journal.compact(() => this.snapshot());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.journal?.drain();
  }

  private assertUsable(): void {
    if (this.closed) throw new Error("the memory driver is closed");
    const failure = this.journal?.failure;
    if (failure) throw failure;
  }

  private databaseName(target: Target): string {
    return target.database ?? this.defaultDatabase;
  }

  private database(name: string, create: true): Database;
  private database(name: string, create?: boolean): Database | undefined;
  private database(name: string, create = false): Database | undefined {
    let database = this.databases.get(name);
    if (!database && create) {
      database = { collections: new Map(), media: new Map() };
      this.databases.set(name, database);
    }
    return database;
  }

  /**
   * How every filtered operation starts: the operators it names loaded, the store usable, the
   * filter compiled. Nothing is awaited after this, so a check and its write stay atomic.
   */
  private async open(target: Target, filter: Filter, update?: object): Promise<{ test: ReturnType<typeof compileFilter>; collection: Collection | undefined }> {
    const loading = loadFor({ filter, update });
    if (loading) await loading;
    this.assertUsable();
    return { test: compileFilter(filter), collection: this.collection(target) };
  }

  private collection(target: Target, create: true): Collection;
  private collection(target: Target, create?: boolean): Collection | undefined;
  private collection(target: Target, create = false): Collection | undefined {
    const database = this.database(this.databaseName(target), create);
    let collection = database?.collections.get(target.collection);
    if (!collection && database && create) {
      collection = new Collection(this.stats);
      database.collections.set(target.collection, collection);
    }
    return collection;
  }

  private async store(target: Target, collection: Collection, stored: Stored, next: Doc): Promise<void> {
    const apply = collection.prepareReplace(stored, next);
    const line = this.encode(() => ({ op: "replace", db: this.databaseName(target), coll: target.collection, doc: next }));
    apply();
    await this.commit(line);
  }

  /**
   * The journal line of a write, made before memory changes: a value the journal cannot encode
   * then refuses the write instead of leaving memory ahead of the file.
   */
  private encode(record: () => JournalRecord): string | null {
    return this.journal ? encodeRecord(record()) : null;
  }

  private async commit(line: string | null): Promise<void> {
    if (line !== null) await this.journal?.append(line);
  }

  private replay(record: JournalRecord): void {
    if (record.op === "media.put") {
      const { data, ...file } = record.file;
      this.database(record.db, true).media.set(file.id, { ...file, data: new Uint8Array(data.value()) });
      return;
    }
    if (record.op === "media.delete") {
      this.database(record.db)?.media.delete(record.id);
      return;
    }
    const collection = this.collection({ database: record.db, collection: record.coll }, true);
    const existing = (id: unknown): Stored => {
      const stored = collection.get(id);
      if (!stored) throw new Error(`no document with _id ${String(id)} in ${record.db}.${record.coll}`);
      return stored;
    };
    switch (record.op) {
      case "insert":
        collection.prepareInsert(record.docs)();
        break;
      case "replace":
        collection.prepareReplace(existing(record.doc._id), record.doc)();
        break;
      case "delete":
        for (const id of record.ids) collection.remove(existing(id));
        break;
      case "clear":
        collection.clear();
        break;
      case "indexes":
        collection.prepareIndexes(record.indexes).apply();
        break;
    }
  }

  private snapshot(): string {
    const lines: string[] = [];
    for (const [db, database] of this.databases) {
      for (const [coll, collection] of database.collections) {
        const indexes = collection.indexSpecs();
        if (indexes.length > 0) lines.push(encodeRecord({ op: "indexes", db, coll, indexes }));
        let batch: Doc[] = [];
        for (const { doc } of collection.documents()) {
          batch.push(doc);
          if (batch.length === SNAPSHOT_BATCH) {
            lines.push(encodeRecord({ op: "insert", db, coll, docs: batch }));
            batch = [];
          }
        }
        if (batch.length > 0) lines.push(encodeRecord({ op: "insert", db, coll, docs: batch }));
      }
      for (const record of database.media.values()) {
        lines.push(encodeRecord({ op: "media.put", db, file: { ...record, data: new Binary(record.data) } }));
      }
    }
    return lines.join("");
  }
}
