// The embedded driver: MongoDB semantics (through mingo) over documents kept in memory, with an
// optional journal that makes every acknowledged write durable.
//
// Every operation does its checking and its change to memory synchronously, before its first
// `await`, so a conditional write (`{_id, _etag}` filter) cannot interleave with another one.
// Only an import may come before: an operation whose filter, update or pipeline needs a module
// not loaded yet (turf for geo operators, aggregation for pipelines and $expr; mingo.ts,
// loadFor) awaits it first, and then does the rest as any other.
import { ObjectId } from "bson";
import { retentionOf, Watchers, type Retention } from "../change-log.ts";
import { InvalidQueryError, UnmetRequirementError, type Change, type ChangeLog, type Doc, type Driver, type FileAccess, type Filter, type FindQuery, type IndexSpec, type MediaStore, type ModifyManyOptions, type ModifyOptions, type Target, type Update } from "../types.ts";
import type { Collection, ScanStats } from "./collection.ts";
import { Commits } from "./commits.ts";
import type { CompactionPolicy } from "./compaction.ts";
import { Databases, deleted, inserted, replaced, storeChangeLog } from "./databases.ts";
import type { Stored } from "./document-table.ts";
import { memoryMedia } from "./media.ts";
import { idKeys, modifiedCopies, requirement } from "./modify.ts";
import { compileFilter, idLookup, loadFor, nearDistance, project, projectShared, runPipeline, updatedCopy, withMingo } from "./mingo.ts";
import { copyDocument, copyValue, valueKey } from "./values.ts";

// Imported by the first keyset read, and by the first sorted read.
let keysetModule: Promise<typeof import("./keyset.ts")> | undefined, orderModule: Promise<typeof import("../sort-order.ts")> | undefined;
/** Stages that write collections, which would bypass the store's indexes and journal. */
const WRITING_STAGES = new Set(["$out", "$merge"]);

export interface MemoryDriverOptions {
  /** The database a Target without `database` refers to. */
  databaseName: string;
  /**
   * Makes the store durable: the journal at `path` is claimed for this process, replayed now and
   * appended to on every write, and compacted in the background as `compaction` says.
   */
  journal?: { files: FileAccess; path: string; compaction?: Partial<CompactionPolicy> };
  /** How long the change log keeps changes (src/drivers/change-log.ts's defaults when absent). */
  retention?: Retention;
}

/** A filtered operation's start (open): its compiled filter and the collection, if it exists. */
interface Opened {
  test: ReturnType<typeof compileFilter>;
  collection: Collection | undefined;
  /** An id lookup's `_id` (mingo.ts, idLookup), `test` then being the rest of its filter; else undefined. */
  id?: unknown;
}

export class MemoryDriver implements Driver {
  readonly kind = "memory";
  /** A write stores a new object and leaves the one it replaces as it was (collection.ts). */
  readonly sharesVersions = true;
  /** This process holds the store (and its journal's lock): nothing else can drop an index. */
  readonly indexesStay = true;
  readonly stats: ScanStats = { documentsExamined: 0, indexScans: 0, fullScans: 0 };
  private readonly databases: Databases;
  private readonly watchers = new Watchers();
  readonly changes: ChangeLog;
  private readonly commits: Commits;
  private closed = false;

  private constructor(private readonly defaultDatabase: string, retention: Retention) {
    this.databases = new Databases(this.stats, retention);
    this.commits = new Commits(this.databases, this.watchers);
    this.changes = storeChangeLog(this.databases, this.watchers, defaultDatabase, () => this.assertUsable());
  }

  static async open(options: MemoryDriverOptions): Promise<MemoryDriver> {
    const driver = new MemoryDriver(options.databaseName, options.retention ?? retentionOf({}));
    if (options.journal) {
      const { files, path } = options.journal;
      const { openJournal } = await import("./persistence.ts");
      ({ journal: driver.commits.journal, compactor: driver.commits.compactor } = await openJournal(files, path, options.journal.compaction, driver.databases));
    }
    return driver;
  }

  async find(target: Target, query: FindQuery): Promise<Doc[]> {
    const keyset = query.after !== undefined && query.sort?.length ? await (keysetModule ??= import("./keyset.ts")) : null;
    const order = query.sort?.length && !keyset ? await (orderModule ??= import("../sort-order.ts")) : null;
    const opening = this.open(target, query.filter);
    const opened = opening instanceof Promise ? await opening : opening;
    const collection = opened.collection;
    if (!collection) return [];
    return withMingo(() => {
      const skip = Math.max(0, query.skip ?? 0);
      const limit = query.limit && query.limit > 0 ? query.limit : Infinity;
      let page: Doc[] = [];
      // As in MongoDB, a $near orders the results nearest first unless a sort is given.
      const near = query.sort?.length || opened.id !== undefined ? null : nearDistance(query.filter);
      if (keyset) page = keyset.keysetPage(collection, query.filter, { sort: query.sort!, after: query.after!, skip, limit, test: opened.test }, opened.id !== undefined ? this.matching(opened, query.filter, false) : undefined).map((stored) => stored.doc);
      else if (order) page = order.sortDocuments(Array.from(this.matching(opened, query.filter, true), (stored) => stored.doc), query.sort!).slice(skip, limit === Infinity ? undefined : skip + limit);
      else if (near) {
        const matches = Array.from(this.matching(opened, query.filter, true), ({ doc }) => ({ doc, distance: near(doc) }));
        matches.sort((a, b) => a.distance - b.distance);
        page = matches.slice(skip, limit === Infinity ? undefined : skip + limit).map(({ doc }) => doc);
      } else if (opened.id === undefined && Object.keys(query.filter).length === 0) {
        page = collection.slice(skip, limit).map((stored) => stored.doc);
      } else {
        let skipped = 0;
        for (const { doc } of this.matching(opened, query.filter, true)) {
          if (skipped < skip) skipped++;
          else if (page.push(doc) >= limit) break;
        }
      }
      // A shared read hands out the stored documents (sharesVersions), or copies naming them.
      if (query.projection && Object.keys(query.projection).length > 0) return query.shared ? projectShared(page, query.projection) : project(page, query.projection, true);
      return query.shared ? page : page.map(copyDocument);
    });
  }

  async count(target: Target, filter: Filter): Promise<number> {
    const opening = this.open(target, filter);
    const opened = opening instanceof Promise ? await opening : opening;
    const collection = opened.collection;
    if (!collection) return 0;
    if (Object.keys(filter).length === 0) return collection.size;
    return withMingo(() => {
      let count = 0;
      for (const _ of this.matching(opened, filter, false)) count++;
      return count;
    });
  }

  estimatedCount(target: Target): Promise<number> {
    return this.count(target, {});
  }

  async insertMany(target: Target, docs: Doc[]): Promise<void> {
    this.assertUsable();
    if (docs.length === 0) return;
    for (const doc of docs) if (doc._id === undefined) doc._id = new ObjectId();
    const collection = this.collection(target, true);
    const copies = docs.map((doc) => collection.copyIn(doc));
    const db = this.databaseName(target);
    const apply = collection.prepareInsert(copies);
    const insert = () => ({ op: "insert" as const, db, coll: target.collection, docs: copies });
    const committing = this.commits.documents(db, target.collection, insert, apply, () => copies.map((copy) => inserted(target.collection, copy)));
    if (committing) await committing;
  }

  async replaceOne(target: Target, filter: Filter, doc: Doc): Promise<boolean> {
    const opening = this.open(target, filter);
    const opened = opening instanceof Promise ? await opening : opening;
    const collection = opened.collection;
    const stored = this.firstMatch(opened, filter);
    if (!collection || !stored) return false;
    const id = stored.doc._id;
    if (doc._id !== undefined && valueKey(doc._id) !== valueKey(id)) throw new InvalidQueryError("the _id of a document cannot change");
    const storing = this.store(target, collection, stored, copyDocument({ ...doc, _id: id }), false);
    if (storing) await storing;
    return true;
  }

  async updateOne(target: Target, filter: Filter, update: Update): Promise<boolean> {
    const opening = this.open(target, filter, update);
    const opened = opening instanceof Promise ? await opening : opening;
    const collection = opened.collection;
    const stored = this.firstMatch(opened, filter);
    if (!collection || !stored) return false;
    const { next, changed } = withMingo(() => updatedCopy(stored.doc, copyValue(update) as Record<string, unknown>));
    // The same value when the update left _id alone (the shallow copy shares it): no keys to make.
    if (next._id !== stored.doc._id && valueKey(next._id) !== valueKey(stored.doc._id)) throw new InvalidQueryError("the _id of a document cannot change");
    const storing = changed.length > 0 ? this.store(target, collection, stored, next, true) : undefined;
    if (storing) await storing;
    return true;
  }

  async findOneAndUpdate(target: Target, filter: Filter, update: Update, options: ModifyOptions = {}): Promise<Change | null> {
    const opening = this.open(target, filter, update, options.require);
    const opened = opening instanceof Promise ? await opening : opening;
    const collection = opened.collection;
    const stored = this.firstMatch(opened, filter);
    if (!collection || !stored) return null;
    const before = stored.doc;
    if (!(requirement(options.require)?.(before) ?? true)) throw new UnmetRequirementError([copyDocument(before)]);
    const [next] = modifiedCopies([before], update, options.stamp);
    const storing = this.store(target, collection, stored, next!, true);
    const change = { before: copyDocument(before), after: copyDocument(next!) };
    if (storing) await storing;
    return change;
  }

  /** All or nothing: every document is checked and changed in one synchronous step, journalled (and recorded) as one record. */
  async updateMany(target: Target, filter: Filter, update: Update, options: ModifyManyOptions = {}): Promise<Change[]> {
    const opening = this.open(target, filter, update, options.require);
    const opened = opening instanceof Promise ? await opening : opening;
    const collection = opened.collection;
    if (!collection) return [];
    const matches = withMingo(() => this.within(collection, opened, filter, idKeys(options.ids)));
    const meets = requirement(options.require);
    const unmet = meets ? matches.filter((stored) => !meets(stored.doc)) : [];
    if (unmet.length > 0) throw new UnmetRequirementError(unmet.map((stored) => copyDocument(stored.doc)));
    if (matches.length === 0) return [];
    const befores = matches.map((stored) => stored.doc);
    const nexts = modifiedCopies(befores, update, options.stamp);
    const db = this.databaseName(target);
    const coll = target.collection;
    const replaceMany = () => ({ op: "replaceMany" as const, db, coll, docs: nexts });
    const recorded = () => befores.map((before, i) => replaced(coll, before, nexts[i]!, true));
    const committing = this.commits.documents(db, coll, replaceMany, () => collection.replaceInOrder(matches, nexts), recorded);
    const changes = befores.map((before, i) => ({ before: copyDocument(before), after: copyDocument(nexts[i]!) }));
    if (committing) await committing;
    return changes;
  }

  async deleteOne(target: Target, filter: Filter): Promise<boolean> {
    const opening = this.open(target, filter);
    const opened = opening instanceof Promise ? await opening : opening;
    const collection = opened.collection;
    const stored = this.firstMatch(opened, filter);
    if (!collection || !stored) return false;
    const committing = this.remove(target, collection, [stored]);
    if (committing) await committing;
    return true;
  }

  async deleteMany(target: Target, filter: Filter, options: { ids?: unknown[] } = {}): Promise<number> {
    const opening = this.open(target, filter);
    const opened = opening instanceof Promise ? await opening : opening;
    const collection = opened.collection;
    if (!collection) return 0;
    const db = this.databaseName(target);
    // A recorded collection is emptied document by document: each one is a change of its own.
    if (Object.keys(filter).length === 0 && !options.ids && !this.commits.recorded(db, target.collection)) {
      const count = collection.size;
      if (count === 0) return 0;
      const committing = this.commits.other(() => ({ op: "clear", db, coll: target.collection }), () => collection.clear());
      if (committing) await committing;
      return count;
    }
    const doomed = withMingo(() => (options.ids ? this.within(collection, opened, filter, idKeys(options.ids)) : [...this.matching(opened, filter, false)]));
    if (doomed.length === 0) return 0;
    const committing = this.remove(target, collection, doomed);
    if (committing) await committing;
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
    const database = this.databases.database(this.databaseName(target));
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
    const committing = this.commits.other(() => ({ op: "indexes", db, coll: target.collection, indexes: changed }), apply);
    if (committing) await committing;
  }

  async dropIndexesBut(target: Target, names: string[]): Promise<string[]> {
    this.assertUsable();
    const { dropped, apply } = this.collection(target, true).prepareDrop((name) => names.includes(name));
    if (dropped.length > 0) await this.commits.other(() => ({ op: "dropIndexes", db: this.databaseName(target), coll: target.collection, names: dropped }), apply);
    return dropped;
  }

  media(database?: string): MediaStore {
    const db = database ?? this.defaultDatabase;
    return memoryMedia((create) => this.databases.database(db, create)?.media, db, {
      usable: () => this.assertUsable(),
      write: (record, change) => this.commits.other(record, change),
    });
  }

  /** A closed driver, or one whose journal could not be written, is not ready. */
  async ping(): Promise<void> {
    this.assertUsable();
  }

  /** Its journal could not be written: memory may hold what the file does not, until a restart replays it. */
  fault(): Error | null {
    return this.commits.journal?.failure ?? null;
  }

  /** Rewrites the journal as the current state, atomically; writes go on meanwhile. */
  async compact(): Promise<void> {
    this.assertUsable();
    if (!this.commits.compactor) throw new Error("this memory driver has no journal to compact");
    await this.commits.compactor.run();
  }

  /** Characters in the journal file now (0 without one): what compaction keeps in bounds. */
  get journalSize(): number {
    return this.commits.journal?.size ?? 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.commits.compactor?.stop();
    await this.commits.journal?.close();
  }

  private assertUsable(): void {
    if (this.closed) throw new Error("the memory driver is closed");
    const failure = this.commits.journal?.failure;
    if (failure) throw failure;
  }

  private databaseName(target: Target): string {
    return target.database ?? this.defaultDatabase;
  }

  /**
   * How every filtered operation starts: the operators it names loaded, the store usable, the
   * filter compiled. Nothing is awaited after this, so a check and its write stay atomic. A
   * promise only while a module is loading: as an async function it cost every read and write
   * a frame and a promise of its own. Operations await only a promise, from here and from the
   * journal (commit): an await of a plain value is a microtask hop and about 200 bytes too.
   */
  private open(target: Target, filter: Filter, update?: object, require?: Filter): Opened | Promise<Opened> {
    const rest = idLookup(filter);
    // An id lookup names no operator: only the update (or a write's requirement) can need a module.
    const loading = loadFor({ filter: rest ? require : require ? { $and: [filter, require] } : filter, update });
    return loading ? loading.then(() => this.opened(target, filter, rest)) : this.opened(target, filter, rest);
  }

  private opened(target: Target, filter: Filter, rest: Opened["test"] | null): Opened {
    this.assertUsable();
    const collection = this.collection(target);
    return rest ? { test: rest, collection, id: filter._id } : { test: compileFilter(filter), collection };
  }

  /** The stored documents passing an opened operation's filter; an id lookup's in one probe, without a generator. */
  private matching(opened: Opened, filter: Filter, ordered: boolean): Iterable<Stored> {
    const { collection, test, id } = opened;
    if (!collection) return [];
    if (id === undefined) return collection.matching(filter, test, ordered);
    const stored = collection.probe(id, test);
    return stored ? [stored] : [];
  }

  /**
   * The stored documents passing the filter, in natural order; limited to `only` (valueKeys of
   * `_id`s, a write by filter naming what it checked) with a probe per id, not a scan.
   */
  private within(collection: Collection, opened: Opened, filter: Filter, only: Set<string> | null): Stored[] {
    if (!only) return [...this.matching(opened, filter, true)];
    if (opened.id !== undefined) return [...this.matching(opened, filter, true)].filter((stored) => only.has(stored.key));
    return [...only].flatMap((key) => collection.probeKey(key, opened.test)).sort((a, b) => a.seq - b.seq);
  }

  private firstMatch(opened: Opened, filter: Filter): Stored | undefined {
    if (opened.id !== undefined) return opened.collection?.probe(opened.id, opened.test);
    return withMingo(() => this.matching(opened, filter, true)[Symbol.iterator]().next().value ?? undefined);
  }

  private collection(target: Target, create: true): Collection;
  private collection(target: Target, create?: boolean): Collection | undefined;
  private collection(target: Target, create = false): Collection | undefined {
    return this.databases.collection(this.databaseName(target), target.collection, create);
  }

  private store(target: Target, collection: Collection, stored: Stored, next: Doc, update: boolean): Promise<void> | undefined {
    const db = this.databaseName(target);
    const coll = target.collection;
    const before = stored.doc;
    const replace = () => ({ op: "replace" as const, db, coll, doc: next });
    return this.commits.documents(db, coll, replace, collection.prepareReplace(stored, next), () => [replaced(coll, before, next, update)], update);
  }

  private remove(target: Target, collection: Collection, doomed: Stored[]): Promise<void> | undefined {
    const db = this.databaseName(target);
    const coll = target.collection;
    const remove = () => ({ op: "delete" as const, db, coll, ids: doomed.map((stored) => stored.doc._id) });
    return this.commits.documents(db, coll, remove, () => doomed.forEach((stored) => collection.remove(stored)), () => doomed.map((stored) => deleted(coll, stored.doc)));
  }
}
