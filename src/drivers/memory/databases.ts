// Everything the memory store holds, by database name: its collections and media files; and how
// a replayed journal record changes it.
import { Collection, type ScanStats } from "./collection.ts";
import type { DataRecord } from "./journal.ts";
import type { MediaRecord } from "./media.ts";

export interface Database {
  collections: Map<string, Collection>;
  media: Map<string, MediaRecord>;
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
        collection.prepareInsert(record.docs.map((doc) => collection.adopt(doc)))();
        break;
      case "replace":
        collection.prepareReplace(existing(record.doc._id), record.doc)();
        break;
      case "replaceMany":
        collection.replaceInOrder(record.docs.map((doc) => existing(doc._id)), record.docs);
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

  /** Every database by name. */
  entries(): IterableIterator<[string, Database]> {
    return this.all.entries();
  }
}
