// Everything the memory store holds, by database name: its collections and media files; and how
// a replayed journal record changes it.
import type { Retention, Watchers } from "../change-log.ts";
import type { ChangeLog, Doc } from "../types.ts";
import { MemoryChangeLog, type FeedMarker, type MemoryChange } from "./change-log.ts";
import { Collection, type ScanStats } from "./collection.ts";
import type { DataRecord } from "./journal.ts";
import type { MediaRecord } from "./media.ts";

export interface Database {
  collections: Map<string, Collection>;
  media: Map<string, MediaRecord>;
  /** The change log, once a collection of this database is recorded or a replayed line says it was. */
  changes?: MemoryChangeLog;
}

export class Databases {
  private readonly all = new Map<string, Database>();

  constructor(
    private readonly stats: ScanStats,
    readonly retention: Retention,
  ) {}

  /** A database's change log, begun now if it has none. */
  changeLog(db: string, epoch?: string): MemoryChangeLog {
    const database = this.database(db, true);
    return (database.changes ??= new MemoryChangeLog(epoch));
  }

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
    if (record.op === "changes") {
      const database = this.database(record.db, true);
      if (record.continued && database.changes) database.changes.restore(record.records);
      else database.changes = new MemoryChangeLog(record.epoch, record);
      return;
    }
    const collection = this.collection(record.db, record.coll, true);
    const existing = (id: unknown) => {
      const stored = collection.get(id);
      if (!stored) throw new Error(`no document with _id ${String(id)} in ${record.db}.${record.coll}`);
      return stored;
    };
    const changed = (feed: FeedMarker | undefined, changes: Array<Omit<MemoryChange, "seq" | "at">>) => {
      if (feed) this.changeLog(record.db, feed.epoch).append(feed, changes, this.retention, true);
    };
    switch (record.op) {
      case "insert": {
        const docs = record.docs.map((doc) => collection.adopt(doc));
        collection.prepareInsert(docs)();
        changed(record.feed, docs.map((doc) => inserted(record.coll, doc)));
        break;
      }
      case "replace": {
        const stored = existing(record.doc._id);
        const before = stored.doc;
        collection.prepareReplace(stored, record.doc)();
        changed(record.feed, [replaced(record.coll, before, record.doc, record.feed?.update)]);
        break;
      }
      case "replaceMany": {
        const stored = record.docs.map((doc) => existing(doc._id));
        const befores = stored.map(({ doc }) => doc);
        collection.replaceInOrder(stored, record.docs);
        changed(record.feed, record.docs.map((doc, i) => replaced(record.coll, befores[i]!, doc, true)));
        break;
      }
      case "delete": {
        const gone = record.ids.map(existing);
        for (const stored of gone) collection.remove(stored);
        changed(record.feed, gone.map((stored) => deleted(record.coll, stored.doc)));
        break;
      }
      case "clear":
        collection.clear();
        break;
      case "indexes":
        collection.prepareIndexes(record.indexes).apply();
        break;
      case "dropIndexes":
        collection.prepareDrop((name) => !record.names.includes(name)).apply();
        break;
    }
  }

  /** Every database by name. */
  entries(): IterableIterator<[string, Database]> {
    return this.all.entries();
  }
}

/** The change an insert of `doc` records. */
export function inserted(coll: string, doc: Doc): Omit<MemoryChange, "seq" | "at"> {
  return { coll, op: "insert", id: doc._id, before: null, after: doc };
}

export function replaced(coll: string, before: Doc, after: Doc, update?: boolean): Omit<MemoryChange, "seq" | "at"> {
  return { coll, op: update ? "update" : "replace", id: after._id, before, after };
}

export function deleted(coll: string, doc: Doc): Omit<MemoryChange, "seq" | "at"> {
  return { coll, op: "delete", id: doc._id, before: doc, after: null };
}

/**
 * The store's change log as the Driver contract shows it (docs/contracts.md §3). One process
 * holds the store (its journal is locked), so every write is heard here: the log pushes.
 */
export function storeChangeLog(databases: Databases, watchers: Watchers, defaultDatabase: string, assertUsable: () => void): ChangeLog {
  return {
    pushes: true,
    record: async (target) => {
      assertUsable();
      databases.changeLog(target.database ?? defaultDatabase).recorded.add(target.collection);
    },
    head: async (database) => databases.changeLog(database ?? defaultDatabase).head(),
    read: async (database, after, limit) => databases.changeLog(database ?? defaultDatabase).read(after, limit, databases.retention),
    watch: (database, wake) => watchers.add(database ?? defaultDatabase, wake),
  };
}
