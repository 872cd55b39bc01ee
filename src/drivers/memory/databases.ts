// Everything the memory store holds, by database name: its collections and media files; and the
// two ways the journal meets it, applying a replayed record and capturing a snapshot.
import { Binary } from "bson";
import type { Doc, IndexSpec } from "../types.ts";
import { Collection, type ScanStats } from "./collection.ts";
import { encodeRecord, type DataRecord } from "./journal.ts";
import type { MediaRecord } from "./media.ts";

/** Documents per insert record in a snapshot, to keep lines reasonably short. */
const SNAPSHOT_BATCH = 1000;

export interface Database {
  collections: Map<string, Collection>;
  media: Map<string, MediaRecord>;
}

interface CapturedCollection {
  db: string;
  coll: string;
  indexes: Array<Required<IndexSpec>>;
  docs: Doc[];
}

export class Databases {
  private readonly all = new Map<string, Database>();

  constructor(private readonly stats: ScanStats) {}

  database(name: string, create: true): Database;
  database(name: string, create?: boolean): Database | undefined;
  database(name: string, create = false): Database | undefined {
    let database = this.all.get(name);
    if (!database && create) {
      database = { collections: new Map(), media: new Map() };
      this.all.set(name, database);
    }
    return database;
  }

  collection(db: string, coll: string, create: true): Collection;
  collection(db: string, coll: string, create?: boolean): Collection | undefined;
  collection(db: string, coll: string, create = false): Collection | undefined {
    const database = this.database(db, create);
    let collection = database?.collections.get(coll);
    if (!collection && database && create) {
      collection = new Collection(this.stats);
      database.collections.set(coll, collection);
    }
    return collection;
  }

  /** Replays one journal record; throws when it does not fit the state (a damaged journal). */
  apply(record: DataRecord): void {
    if (record.op === "media.put") {
      const { data, ...file } = record.file;
      this.database(record.db, true).media.set(file.id, { ...file, data: new Uint8Array(data.value()) });
      return;
    }
    if (record.op === "media.delete") {
      this.database(record.db)?.media.delete(record.id);
      return;
    }
    const collection = this.collection(record.db, record.coll, true);
    const existing = (id: unknown) => {
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

  /**
   * The journal lines of the state as it is now, made lazily. Stored documents and media are
   * never changed in place (a write stores a new object), so holding references to the current
   * ones is a consistent snapshot that later writes do not disturb, without copying the data.
   */
  capture(): Iterable<string> {
    const collections: CapturedCollection[] = [];
    const media: Array<{ db: string; files: MediaRecord[] }> = [];
    for (const [db, database] of this.all) {
      for (const [coll, collection] of database.collections) {
        collections.push({ db, coll, indexes: collection.indexSpecs(), docs: Array.from(collection.documents(), (stored) => stored.doc) });
      }
      media.push({ db, files: [...database.media.values()] });
    }
    return snapshotLines(collections, media);
  }
}

function* snapshotLines(collections: CapturedCollection[], media: Array<{ db: string; files: MediaRecord[] }>): Generator<string> {
  for (const { db, coll, indexes, docs } of collections) {
    if (indexes.length > 0) yield encodeRecord({ op: "indexes", db, coll, indexes });
    for (let start = 0; start < docs.length; start += SNAPSHOT_BATCH) {
      yield encodeRecord({ op: "insert", db, coll, docs: docs.slice(start, start + SNAPSHOT_BATCH) });
    }
  }
  for (const { db, files } of media) {
    for (const file of files) yield encodeRecord({ op: "media.put", db, file: { ...file, data: new Binary(file.data) } });
  }
}
