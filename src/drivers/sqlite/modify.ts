// The sqlite driver's findOneAndUpdate and updateMany: the matching rows read, each new document
// made by the same code as the memory driver's (../memory/modify.ts) and written, all in one
// atomic step. On a port with transactions (node:sqlite, bun:sqlite) that step is one
// transaction holding the write lock from its first read, so another process on the file can
// neither slip a write in nor make it retry. D1 has none: the rows are read, then written in one
// batch that changes each only if it still holds the text that was read, and that fails as a
// whole (a CHECK on a guard table) if any did not; it is then tried again on fresh rows. Writes
// of one document from this process take turns, so retries are only ever for writers elsewhere.
// Where the collection is recorded, each changed document's change-log row is written by the
// same transaction or batch (docs/contracts.md §3).
import { ObjectId } from "bson";
import { UnmetRequirementError, type Change, type Doc, type Filter, type ModifyManyOptions, type Update } from "../types.ts";
import { modifiedCopies, requirement } from "../memory/modify.ts";
import { decodeDocument, encodeDocument, idKey } from "./codec.ts";
import { refusedTranslation, SqlError, unavailable, type Row, type SqlPort, type Statement } from "./port.ts";
import { selection, type Match, type Selection, type Test } from "./select.ts";
import type { IndexHint } from "./translate.ts";

/** The table a batch's check writes to: its CHECK fails when a row was changed by another writer. */
export const GUARD_TABLE = "_everest_guard";
const GUARD = "everest_unchanged";
export const GUARD_SCHEMA: Statement = { sql: `CREATE TABLE IF NOT EXISTS ${GUARD_TABLE} (ok INTEGER NOT NULL CONSTRAINT ${GUARD} CHECK (ok = 1))`, params: [] };

/** Attempts of a D1 write whose rows writers elsewhere kept changing, and the most it waits between two. */
const ATTEMPTS = 50;
const MAX_PAUSE_MS = 100;
/** Characters of row text per statement of a D1 batch, well inside D1's limit on a bound value. */
const CHUNK_CHARS = 400_000;

export interface ModifyHost {
  port: SqlPort;
  /** The writes waited for by key (a document, or a table), without transactions (inTurn). */
  turns: Map<string, Promise<unknown>>;
  /** The collection's table, as an SQL identifier. */
  table: string;
  hint: IndexHint;
  read(statement: Statement): Promise<Row[]>;
  /** Runs a write of `docs`, a broken unique index becoming a DuplicateKeyError that names the document. */
  write<T>(work: () => Promise<T>, docs: Doc[], encoded: string[]): Promise<T>;
  /** The collection's change log (changes.ts), where it is recorded. */
  log?: { entry(before: string, after: string): Statement; updates(triples: string): Statement };
}

interface Planned {
  changes: Change[];
  encoded: string[];
}

/** What the write does to the matches: requirement checked, each new document made and encoded. */
function plan(matches: Match[], update: Update, options: ModifyManyOptions): Planned {
  const meets = requirement(options.require);
  const unmet = meets ? matches.filter((match) => !meets(match.doc)) : [];
  if (unmet.length > 0) throw new UnmetRequirementError(unmet.map((match) => match.doc));
  const afters = modifiedCopies(matches.map((match) => match.doc), update, options.stamp);
  // `before` decoded afresh: the new document may share values with the one it was made from.
  const changes = matches.map((match, i) => ({ before: decodeDocument(match.text), after: afters[i]! }));
  return { changes, encoded: changes.map((change) => encodeDocument(change.after)) };
}

export async function modifyRows(host: ModifyHost, filter: Filter, test: Test, update: Update, options: ModifyManyOptions, one: boolean): Promise<Change[]> {
  const scoped = options.ids ? { $and: [filter, { _id: { $in: options.ids } }] } : filter;
  const rows = selection(host.table, scoped, host.hint, one ? { limit: 1 } : {});
  const transaction = host.port.transaction?.bind(host.port);
  if (transaction) {
    // Filled inside the transaction, so that a unique index's refusal can name the document.
    const docs: Doc[] = [];
    const encoded: string[] = [];
    return host.write(
      () =>
        transaction((tx) => {
          let matches: Match[];
          try {
            matches = rows.matches(tx.all(rows.statement), test);
          } catch (error) {
            if (!(error instanceof SqlError)) throw error;
            if (error.failure === "missing-table") return [];
            matches = rows.scanned(tx.all(rows.scan), test);
          }
          const planned = plan(one ? matches.slice(0, 1) : matches, update, options);
          planned.changes.forEach((change, i) => {
            docs.push(change.after);
            encoded.push(planned.encoded[i]!);
            tx.run({ sql: `UPDATE ${host.table} SET doc = ? WHERE id = ?`, params: [planned.encoded[i]!, matches[i]!.id] });
            if (host.log) tx.run(host.log.entry(matches[i]!.text, planned.encoded[i]!));
          });
          return planned.changes;
        }),
      docs,
      encoded,
    );
  }
  // One writer of a document (of the table, for a write not by _id) at a time from this
  // process: retries are for writers elsewhere, which would otherwise be outrun by those here.
  const id = filter._id;
  const key = id !== undefined && (typeof id !== "object" || id instanceof ObjectId) ? `${host.table}\u0000${idKey(id)}` : host.table;
  return inTurn(host.turns, key, () => compareAndSwap(host, rows, test, update, options, one));
}

/** Runs `work` once every earlier work of the same key has settled. */
function inTurn<T>(turns: Map<string, Promise<unknown>>, key: string, work: () => Promise<T>): Promise<T> {
  const running = (turns.get(key) ?? Promise.resolve()).then(work, work);
  const settled = running.then(
    () => undefined,
    () => undefined,
  );
  turns.set(key, settled);
  void settled.then(() => {
    if (turns.get(key) === settled) turns.delete(key);
  });
  return running;
}

/** The rows read, then written in one batch only where each still holds what was read; again on fresh rows when not. */
async function compareAndSwap(host: ModifyHost, rows: Selection, test: Test, update: Update, options: ModifyManyOptions, one: boolean): Promise<Change[]> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    let matches: Match[];
    try {
      matches = rows.matches(await host.read(rows.statement), test);
    } catch (error) {
      if (!refusedTranslation(error)) throw error;
      matches = rows.scanned(await host.read(rows.scan), test);
    }
    if (one) matches = matches.slice(0, 1);
    if (matches.length === 0) return [];
    const planned = plan(matches, update, options);
    try {
      await host.write(() => host.port.batch(casBatch(host, matches, planned.encoded)), planned.changes.map((change) => change.after), planned.encoded);
      return planned.changes;
    } catch (error) {
      if (!(error instanceof SqlError && error.message.includes(GUARD))) throw error;
    }
    // Another writer changed a row in between: a pause of random length keeps retries apart.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_PAUSE_MS, 2 ** attempt)));
  }
  throw unavailable(new Error("the documents kept changing while they were being written"));
}

/**
 * Statements that write each row's new text only where it still holds the text read, then
 * check that every row was written (and record the rows in the change log), in chunks that each
 * stay within what D1 binds.
 */
function casBatch(host: ModifyHost, matches: Match[], encoded: string[]): Statement[] {
  const table = host.table;
  const statements: Statement[] = [];
  let chunk: string[][] = [];
  let size = 0;
  const flush = () => {
    if (chunk.length === 0) return;
    const rows = JSON.stringify(chunk);
    const triples = "SELECT value ->> 0 AS id, value ->> 1 AS old, value ->> 2 AS new FROM json_each(?)";
    statements.push(
      { sql: `UPDATE ${table} SET doc = c.new FROM (${triples}) AS c WHERE ${table}.id = c.id AND ${table}.doc = c.old`, params: [rows] },
      // changes() counts what the UPDATE just before it changed: two writers that made the same
      // new text from the same old one must not both count it as theirs.
      { sql: `INSERT INTO ${GUARD_TABLE} (ok) VALUES (changes() = ?)`, params: [chunk.length] },
      ...(host.log ? [host.log.updates(rows)] : []),
    );
    chunk = [];
    size = 0;
  };
  matches.forEach((match, i) => {
    chunk.push([match.id, match.text, encoded[i]!]);
    size += match.text.length + encoded[i]!.length;
    if (size >= CHUNK_CHARS) flush();
  });
  flush();
  statements.push({ sql: `DELETE FROM ${GUARD_TABLE}`, params: [] });
  return statements;
}
