// The sqlite driver: one table per collection of each database (named `<database>.<collection>`),
// a row per document — `id`, the `_id`'s stored JSON text (so its BSON type is kept, and it is
// the primary key), and `doc`, the document as JSON (codec.ts). Filters and sorts are answered
// by SQL where translate.ts can express them, the rest in JavaScript with the same mingo set-up
// as the memory driver, so both give the same results. Every write is one statement or one
// transaction of the port; a conditional write changes a row only if it still holds the text
// that was matched (`WHERE id = ? AND doc = ?`), which makes check-and-write atomic even
// between processes sharing the file or isolates sharing a D1 database.
import { ObjectId } from "bson";
import { retentionOf, type Retention } from "../change-log.ts";
import { DuplicateKeyError, InvalidQueryError, type Change, type Doc, type Driver, type Filter, type FindQuery, type IndexSpec, type MediaStore, type ModifyManyOptions, type ModifyOptions, type Target, type Update } from "../types.ts";
import { applyUpdate, compileFilter, loadFor, nearDistance, project, runPipeline, withMingo } from "../memory/mingo.ts";
import { copyValue, valuesAtPath } from "../memory/values.ts";
import { SqliteChangeLog } from "./changes.ts";
import { decodeDocument, encodeDocument, encodeValue, idKey } from "./codec.ts";
import { COUNT_QUERY, COUNT_SCHEMA, countStatements } from "./counts.ts";
import { failedIndex, identifier, INDEX_TABLE, indexChange, indexStatements, keyValueOf, normalizeSpec, sameKeyParams, sameKeyQuery, type RecordedSpec, type UniqueIndexInfo } from "./indexes.ts";
import { sqliteMedia, MEDIA_SCHEMA } from "./media.ts";
import { countHitStatement, expiredStatement, RATE_LIMIT_SCHEMA, RATE_LIMIT_TABLE } from "./rate-limits.ts";
import { guarded, refusedTranslation, SqlError, unavailable, type Row, type SqlPort, type Statement } from "./port.ts";
import { GUARD_SCHEMA, modifyRows, type ModifyHost } from "./modify.ts";
import { translateFilter, type IndexHint } from "./translate.ts";
import { selection, sortsInSql, type Match, type Page, type Test } from "./select.ts";
import { keysetFind, sortOrderBy } from "./keyset.ts";
import { sortDocuments } from "../sort-order.ts";
import { collectionsRead, WRITING_STAGES } from "./pipelines.ts";

const RATE_LIMIT_SWEEP_MS = 60_000;
/** Attempts of a conditional write whose row another writer changed in between. */
const WRITE_ATTEMPTS = 50;

function isEmpty(filter: Filter): boolean {
  return Object.keys(filter).length === 0;
}

export class SqliteDriver implements Driver {
  readonly kind = "sqlite";
  private readonly tables = new Map<string, Promise<void>>();
  /** Per table, the fields with expression indexes, read once from `_everest_indexes`. */
  private readonly hints = new Map<string, Promise<IndexHint>>();
  /** The atomic updates waiting for their turn on a port without transactions (modify.ts). */
  private readonly turns = new Map<string, Promise<unknown>>();
  private closed = false;
  /** The rate-limit table made (on first use), and when ended windows are next dropped. */
  private rateLimitTable?: Promise<void>;
  private nextRateLimitSweep = 0;
  readonly changes: SqliteChangeLog;

  private constructor(
    private readonly port: SqlPort,
    private readonly defaultDatabase: string,
    retention: Retention,
  ) {
    this.changes = new SqliteChangeLog(port, defaultDatabase, retention);
  }

  static async open(port: SqlPort, databaseName: string, retention: Retention = retentionOf({})): Promise<SqliteDriver> {
    const driver = new SqliteDriver(port, databaseName, retention);
    await guarded(() => port.batch([{ sql: `CREATE TABLE IF NOT EXISTS ${INDEX_TABLE} (tbl TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL, PRIMARY KEY (tbl, name))`, params: [] }, COUNT_SCHEMA, GUARD_SCHEMA, ...MEDIA_SCHEMA]));
    return driver;
  }

  async find(target: Target, query: FindQuery): Promise<Doc[]> {
    const test = await this.compile(query.filter);
    const near = query.sort?.length ? null : nearDistance(query.filter);
    let docs: Doc[];
    const order = sortOrderBy(query.sort);
    const where = translateFilter(query.filter, await this.hint(target));
    if (query.after !== undefined && query.sort?.length) docs = await keysetFind(query, { table: this.table(target), where, test }, (statement) => this.read(target, statement), async () => (await this.select(target, query.filter, test, {})).map((m) => m.doc));
    else if (where.exact && order !== null && !near && (query.sortsAlike || (await sortsInSql((statement) => this.read(target, statement), this.table(target), where, query.sort)))) {
      docs = (await this.select(target, query.filter, test, { order, skip: query.skip, limit: query.limit })).map((m) => m.doc);
    } else {
      const matches = (await this.select(target, query.filter, test, {})).map((m) => m.doc);
      const skip = Math.max(0, query.skip ?? 0);
      const end = query.limit && query.limit > 0 ? skip + query.limit : undefined;
      if (query.sort?.length) docs = sortDocuments(matches, query.sort).slice(skip, end);
      else if (near) docs = matches.map((doc) => ({ doc, distance: near(doc) })).sort((a, b) => a.distance - b.distance).slice(skip, end).map(({ doc }) => doc);
      else docs = matches.slice(skip, end);
    }
    if (query.projection && Object.keys(query.projection).length > 0) docs = withMingo(() => project(docs, query.projection!));
    return docs;
  }

  async count(target: Target, filter: Filter): Promise<number> {
    const test = await this.compile(filter);
    if (isEmpty(filter)) {
      const [kept] = await this.read(target, { sql: COUNT_QUERY, params: [this.tableName(target)] });
      if (kept) return Number(kept.n);
    }
    const where = translateFilter(filter, await this.hint(target));
    if (where.exact) {
      try {
        const rows = await this.read(target, { sql: `SELECT count(*) AS n FROM ${this.table(target)} WHERE ${where.sql}`, params: where.params });
        return Number(rows[0]?.n ?? 0);
      } catch (error) {
        // Counted by the scan below, as select() reads what SQLite refuses to translate.
        if (!refusedTranslation(error)) throw error;
      }
    }
    return (await this.select(target, filter, test, {})).length;
  }

  estimatedCount(target: Target): Promise<number> {
    return this.count(target, {});
  }

  async insertMany(target: Target, docs: Doc[]): Promise<void> {
    this.assertUsable();
    if (docs.length === 0) return;
    for (const doc of docs) if (doc._id === undefined) doc._id = new ObjectId();
    const encoded = docs.map(encodeDocument);
    const statements: Statement[] = docs.map((doc, i) => ({ sql: `INSERT INTO ${this.table(target)} (id, doc) VALUES (?, ?)`, params: [idKey(doc._id), encoded[i]!] }));
    const db = this.changes.database(this.tableName(target));
    if (db !== undefined) statements.push(...encoded.map((text) => this.changes.entry(db, target.collection, "insert", null, text)));
    await this.ensureTable(target);
    await this.write(target, () => this.port.batch(statements), docs, encoded);
    if (db !== undefined) this.changes.written(db);
  }

  async replaceOne(target: Target, filter: Filter, doc: Doc): Promise<boolean> {
    return this.rewrite(target, filter, undefined, "replace", (match) => {
      if (doc._id !== undefined && idKey(doc._id) !== match.id) throw new InvalidQueryError("the _id of a document cannot change");
      return { ...doc, _id: match.doc._id };
    });
  }

  async updateOne(target: Target, filter: Filter, update: Update): Promise<boolean> {
    return this.rewrite(target, filter, update, "update", (match) => {
      const next = decodeDocument(match.text);
      const changed = withMingo(() => applyUpdate(next, copyValue(update) as Record<string, unknown>));
      if (idKey(next._id) !== match.id) throw new InvalidQueryError("the _id of a document cannot change");
      return changed.length > 0 ? next : null;
    });
  }

  async findOneAndUpdate(target: Target, filter: Filter, update: Update, options: ModifyOptions = {}): Promise<Change | null> {
    return (await this.modify(target, filter, update, options, true))[0] ?? null;
  }

  async updateMany(target: Target, filter: Filter, update: Update, options: ModifyManyOptions = {}): Promise<Change[]> {
    return this.modify(target, filter, update, options, false);
  }

  async deleteOne(target: Target, filter: Filter): Promise<boolean> {
    const test = await this.compile(filter);
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const [match] = await this.select(target, filter, test, { limit: 1 });
      if (!match) return false;
      const statement = { sql: `DELETE FROM ${this.table(target)} WHERE id = ? AND doc = ?`, params: [match.id, match.text] };
      if ((await this.recordedChange(target, statement, "delete", match.text, null)) > 0) return true;
    }
    throw unavailable(new Error("the document kept changing while it was being deleted"));
  }

  async deleteMany(target: Target, givenFilter: Filter, options: { ids?: unknown[] } = {}): Promise<number> {
    const filter = options.ids ? { $and: [givenFilter, { _id: { $in: options.ids } }] } : givenFilter;
    const test = await this.compile(filter);
    const translated = translateFilter(filter, await this.hint(target));
    let where: Statement = translated;
    if (!translated.exact) {
      const ids = (await this.select(target, filter, test, {})).map((match) => match.id);
      if (ids.length === 0) return 0;
      where = { sql: "id IN (SELECT value FROM json_each(?))", params: [JSON.stringify(ids)] };
    }
    const deletion = { sql: `DELETE FROM ${this.table(target)} WHERE ${where.sql}`, params: where.params };
    const db = this.changes.database(this.tableName(target));
    if (db === undefined) return this.change(target, deletion);
    // The deleted rows are recorded by the same transaction, read just before it deletes them.
    const changes = this.present(target, await guarded(() => this.port.batch([this.changes.deletions(db, target.collection, this.table(target), where), deletion])), [0, 0]);
    this.changes.written(db);
    return changes[1]!;
  }

  async aggregate(target: Target, pipeline: Doc[]): Promise<Doc[]> {
    const loading = loadFor({ pipeline });
    if (loading) await loading;
    this.assertUsable();
    for (const stage of pipeline) for (const key of Object.keys(stage)) if (WRITING_STAGES.has(key)) throw new InvalidQueryError(`the ${key} stage is not supported by the sqlite driver`);
    const [first, ...rest] = pipeline;
    const leading = first && Object.keys(first).length === 1 ? first.$match : undefined;
    const match = leading && typeof leading === "object" && !Array.isArray(leading) ? (leading as Filter) : null;
    const input = await this.find(target, { filter: match ?? {} });
    const others = new Map<string, Doc[]>();
    for (const name of collectionsRead(pipeline)) others.set(name, await this.find({ database: target.database, collection: name }, { filter: {} }));
    return withMingo(() => runPipeline(match ? rest : pipeline, input, (name) => others.get(name) ?? []));
  }

  async createIndexes(target: Target, indexes: IndexSpec[]): Promise<void> {
    this.assertUsable();
    await this.ensureTable(target);
    const table = this.tableName(target);
    const existing = await this.specs(table);
    const statements: Statement[] = [];
    for (const spec of indexes.map(normalizeSpec)) {
      const change = indexChange(existing.get(spec.name), spec);
      if (change === "none") continue;
      existing.set(spec.name, spec);
      statements.push(...indexStatements(table, spec, change === "replace"));
    }
    if (statements.length === 0) return;
    this.hints.delete(table);
    try {
      await guarded(() => this.port.batch(statements));
    } catch (error) {
      if (!(error instanceof SqlError && error.failure === "unique")) throw error;
      const index = failedIndex(error.message, table, existing);
      throw new DuplicateKeyError(Object.fromEntries(index.fields.map((field) => [field, null])), `a unique index on ${index.fields.join(", ")} cannot be built over duplicate values`);
    }
  }

  async countHit(key: string, windowEnd: number): Promise<number> {
    this.assertUsable();
    const now = Date.now();
    if (now >= this.nextRateLimitSweep) {
      this.rateLimitTable ??= guarded(() => this.port.batch([RATE_LIMIT_SCHEMA])).then(() => undefined);
      await this.rateLimitTable;
      this.nextRateLimitSweep = now + RATE_LIMIT_SWEEP_MS;
      await guarded(() => this.port.run(expiredStatement(now)));
    }
    const [row] = (await guarded(() => this.port.all(countHitStatement(key, windowEnd)))) ?? [];
    if (!row) throw unavailable(new Error(`the table ${RATE_LIMIT_TABLE} is missing`));
    return Number(row.n);
  }

  async ping(): Promise<void> {
    this.assertUsable();
    await guarded(() => this.port.all({ sql: `SELECT count(*) AS n FROM ${INDEX_TABLE}`, params: [] }));
  }

  media(database?: string): MediaStore {
    return sqliteMedia(this.port, database ?? this.defaultDatabase, () => this.assertUsable());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.port.close();
  }

  private assertUsable(): void {
    if (this.closed) throw new Error("the sqlite driver is closed");
  }

  private tableName(target: Target): string {
    return `${target.database ?? this.defaultDatabase}.${target.collection}`;
  }

  private table(target: Target): string {
    return identifier(this.tableName(target));
  }

  private ensureTable(target: Target): Promise<void> {
    const name = this.tableName(target);
    let ready = this.tables.get(name);
    if (!ready) {
      const create = { sql: `CREATE TABLE IF NOT EXISTS ${identifier(name)} (id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL)`, params: [] };
      ready = guarded(() => this.port.batch([create, ...countStatements(name)])).then(() => undefined);
      ready.catch(() => this.tables.delete(name));
      this.tables.set(name, ready);
    }
    return ready;
  }

  private hint(target: Target): Promise<IndexHint> {
    const table = this.tableName(target);
    let hint = this.hints.get(table);
    if (!hint) {
      hint = this.specs(table).then((specs) => ({
        table: identifier(table),
        indexed: new Set([...specs.values()].flatMap((spec) => (!spec.orderOnly && spec.keys[0] && spec.keys[0][1] !== "2dsphere" && spec.keys[0][1] !== "2d" && spec.keys[0][1] !== "text" ? [spec.keys[0][0]] : []))),
      }));
      hint.catch(() => this.hints.delete(table));
      this.hints.set(table, hint);
    }
    return hint;
  }

  private async specs(table: string): Promise<Map<string, RecordedSpec>> {
    const rows = (await guarded(() => this.port.all({ sql: `SELECT name, spec FROM ${INDEX_TABLE} WHERE tbl = ?`, params: [table] }))) ?? [];
    return new Map(rows.map((row) => [String(row.name), JSON.parse(String(row.spec)) as RecordedSpec]));
  }

  /** The operators a filter names loaded, the driver usable, the filter compiled (and checked, as mingo checks it). */
  private async compile(filter: Filter, update?: object): Promise<Test> {
    const loading = loadFor({ filter, update });
    if (loading) await loading;
    this.assertUsable();
    return compileFilter(filter);
  }

  private async read(target: Target, statement: Statement): Promise<Row[]> {
    return this.present(target, await guarded(() => this.port.all(statement)), []);
  }

  /**
   * What a statement on the collection's table gave, or `empty` where the table is not there: a
   * collection never written reads as empty. One this process created, another client dropped,
   * and it is not made again behind the data's back: 503 until a restart (docs/drivers.md).
   */
  private present<T>(target: Target, result: T | null, empty: T): T {
    if (result !== null) return result;
    if (this.tables.has(this.tableName(target))) throw unavailable(new Error(`the table of ${this.tableName(target)} is missing`));
    return empty;
  }

  /** Rows matching `filter` (select.ts); a translation SQLite refuses is dropped for a scan, so it never surfaces as a 500. */
  private async select(target: Target, filter: Filter, test: Test, page: Page): Promise<Match[]> {
    const rows = selection(this.table(target), filter, await this.hint(target), page);
    try {
      return rows.matches(await this.read(target, rows.statement), test);
    } catch (error) {
      if (!refusedTranslation(error)) throw error;
      return rows.scanned(await this.read(target, rows.scan), test);
    }
  }

  /** Replaces the first match with what `next` makes of it (null: nothing to change), guarded by the matched text. */
  private async rewrite(target: Target, filter: Filter, update: object | undefined, op: "replace" | "update", next: (match: Match) => Doc | null): Promise<boolean> {
    const test = await this.compile(filter, update);
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const [match] = await this.select(target, filter, test, { limit: 1 });
      if (!match) return false;
      const doc = next(match);
      if (!doc) return true;
      const encoded = encodeDocument(doc);
      const statement = { sql: `UPDATE ${this.table(target)} SET doc = ? WHERE id = ? AND doc = ?`, params: [encoded, match.id, match.text] };
      if ((await this.write(target, () => this.recordedChange(target, statement, op, match.text, encoded), [doc], [encoded])) > 0) return true;
    }
    throw unavailable(new Error("the document kept changing while it was being written"));
  }

  private async modify(target: Target, filter: Filter, update: Update, options: ModifyManyOptions, one: boolean): Promise<Change[]> {
    const test = await this.compile(filter, update);
    if (options.require) await this.compile(options.require);
    const db = this.changes.database(this.tableName(target));
    const coll = target.collection;
    const host: ModifyHost = {
      port: this.port, turns: this.turns, table: this.table(target), hint: await this.hint(target),
      read: (statement: Statement) => this.read(target, statement),
      write: <T>(work: () => Promise<T>, docs: Doc[], encoded: string[]) => this.write(target, work, docs, encoded),
      ...(db === undefined ? {} : { log: { entry: (before, after) => this.changes.entry(db, coll, "update", before, after), updates: (triples) => this.changes.updates(db, coll, triples) } }),
    };
    const changes = await modifyRows(host, filter, test, update, options, one);
    if (db !== undefined && changes.length > 0) this.changes.written(db);
    return changes;
  }

  private async change(target: Target, statement: Statement): Promise<number> {
    return this.present(target, await guarded(() => this.port.run(statement)), 0);
  }

  /** A conditional write of one document and, where its collection is recorded, its change, in one transaction. */
  private async recordedChange(target: Target, statement: Statement, op: "replace" | "update" | "delete", before: string, after: string | null): Promise<number> {
    const db = this.changes.database(this.tableName(target));
    if (db === undefined) return this.change(target, statement);
    const [changed] = (await guarded(() => this.port.batch([statement, this.changes.entry(db, target.collection, op, before, after, true)]))) ?? [0];
    if (changed) this.changes.written(db);
    return changed ?? 0;
  }

  /** Runs a write of `docs`; a broken unique index becomes a DuplicateKeyError naming the first document that broke it. */
  private async write<T>(target: Target, work: () => Promise<T>, docs: Doc[], encoded: string[]): Promise<T> {
    try {
      const result = await guarded(work);
      if (result === null) throw unavailable(new Error(`the table of ${this.tableName(target)} is missing`));
      return result;
    } catch (error) {
      if (!(error instanceof SqlError && error.failure === "unique")) throw error;
      const table = this.tableName(target);
      const index = failedIndex(error.message, table, await this.specs(table));
      throw new DuplicateKeyError(await this.offending(target, index, docs, encoded), error.message);
    }
  }

  /** The key of the first document that repeats an earlier one of the batch or a stored one. */
  private async offending(target: Target, index: UniqueIndexInfo, docs: Doc[], encoded: string[]): Promise<Record<string, unknown>> {
    const seen = new Set<string>();
    for (const [i, doc] of docs.entries()) {
      const key = JSON.stringify(index.fields.map((field) => encodeValue(valuesAtPath(doc, field.split("."))[0])));
      const clashes = seen.has(key) || (await this.read(target, { sql: sameKeyQuery(this.tableName(target), index), params: sameKeyParams(index, doc, encoded[i]!) })).length > 0;
      if (clashes) return keyValueOf(doc, index.fields);
      seen.add(key);
    }
    return keyValueOf(docs[0] ?? {}, index.fields);
  }
}

