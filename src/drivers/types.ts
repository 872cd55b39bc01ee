// The one data-layer contract every backend implements (the analogue of Eve's eve/io/base.py).
// Documents cross it in everest's canonical form: ObjectId and Decimal128 from `bson`, Date for
// datetimes, plain objects and arrays otherwise. Filters, sorts, projections, updates and
// pipelines use MongoDB syntax.

export type Doc = Record<string, unknown>;
export type Filter = Record<string, unknown>;
/** Ordered (field, direction) pairs. */
export type Sort = Array<[string, 1 | -1]>;
/** Inclusive (all 1) or exclusive (all 0); `_id` may be 0 in an inclusive one. */
export type Projection = Record<string, 0 | 1>;

/** Which collection of which database. `database` undefined means the driver's default. */
export interface Target {
  database?: string;
  collection: string;
}

export interface FindQuery {
  filter: Filter;
  sort?: Sort;
  projection?: Projection;
  skip?: number;
  limit?: number;
  /**
   * The caller only reads the documents (it renders them and drops them) and changes nothing of
   * them, their top level included: a driver that keeps documents in memory may hand out the
   * very objects it holds (Driver.sharesVersions).
   */
  shared?: boolean;
  /** The schema lets sorted paths hold no array or document (settings/rule-types.ts sortsAlike): the sqlite driver need not look for them. */
  sortsAlike?: boolean;
  /**
   * A keyset read (cursor paging, docs/paging.md): the documents come in MongoDB's sort order
   * (sort-order.ts), `sort` naming `_id` last so that the order is total, and only those that
   * sort after this document, of which it holds the sorted fields (sort-order.ts sortFields).
   * Null: from the first document in that order. `skip` and `limit` count from there.
   */
  after?: Doc | null;
}

/**
 * On a copy a shared read made of a stored document (a projection that left fields out), the
 * stored document it was made from (Driver.sharesVersions).
 */
export const STORED_VERSION: unique symbol = Symbol("everest.storedVersion");

/** A document of a shared read, with the stored document it was copied from, if it is a copy. */
export type SharedDoc = Doc & { [STORED_VERSION]?: Doc };

/**
 * The stored version a shared read's document shows, from a driver that shares versions: an
 * object that stays the same for as long as the stored document is unchanged and is never the
 * same for two versions, so whatever is derived from one version alone may be kept by it
 * (src/render/kept-json.ts).
 */
export function versionOf(document: SharedDoc): object {
  return document[STORED_VERSION] ?? document;
}

/**
 * Update operators with dotted paths, as MongoDB takes them. The core's own writes send
 * `$set`/`$unset`; an update-operator PATCH (docs/updates.md) sends the others too, after the
 * core has checked them against the schema (`$currentDate` arrives as a `$set` of the time).
 */
export interface Update {
  $set?: Doc;
  $unset?: Record<string, "" | 1 | true>;
  $inc?: Record<string, number>;
  $mul?: Record<string, number>;
  $min?: Doc;
  $max?: Doc;
  /** A value, or `{$each: [...], $position?, $slice?}`. */
  $push?: Doc;
  /** A value, or `{$each: [...]}`. */
  $addToSet?: Doc;
  /** A value, or a condition on the list's items. */
  $pull?: Doc;
}

/** One document a write changed, as stored before and after it. */
export type Change = { before: Doc; after: Doc };

/**
 * A field a write keeps derived from the document it leaves: the ETag. Drivers that run code in
 * a write's atomic step (memory, sqlite, the gateway over one of them) set `field` to
 * `value(document)` there; the others (mongodb) set it to a fresh random value of the same
 * form instead, which no earlier ETag can equal (docs/updates.md).
 */
export interface Stamp {
  field: string;
  /** Fields left out of the hash (a resource's etag_ignore_fields): what the gateway needs to compute `value` itself. */
  ignore: string[] | null;
  value(document: Doc): string;
}

export interface ModifyOptions {
  stamp?: Stamp;
  /**
   * A condition each document the write would change must also meet, checked in the write's
   * atomic step: a document matching the filter but not this makes the whole write fail with
   * UnmetRequirementError, leaving everything as it was.
   */
  require?: Filter;
}

export interface ModifyManyOptions extends ModifyOptions {
  /** Only documents with one of these `_id`s (and matching the filter) are changed. */
  ids?: unknown[];
}

export interface IndexSpec {
  /** e.g. [["lastname", 1]] or [["location", "2dsphere"]] */
  keys: Array<[string, 1 | -1 | "2dsphere" | "2d" | "text" | "hashed"]>;
  name?: string;
  unique?: boolean;
  sparse?: boolean;
  /**
   * Serves the order of keyset reads on exactly these keys (FindQuery.after), nothing else: a
   * store that already holds an index on the same keys keeps that one, whatever its name.
   */
  orderOnly?: boolean;
}

/** An index spec with its defaults filled in, comparable by JSON (`orderOnly` only where true). */
export type NormalizedIndexSpec = Required<Omit<IndexSpec, "orderOnly">> & { orderOnly?: true };

export interface MediaFile {
  id: string;
  filename?: string;
  contentType: string;
  length: number;
  uploadDate: Date;
  /** Whole content, or bytes [start, end] inclusive. */
  read(range?: { start: number; end: number }): Promise<Uint8Array> | ReadableStream<Uint8Array>;
}

export interface MediaStore {
  /** A Blob (an upload) is streamed into the store where the store allows, never copied first. */
  put(data: Uint8Array | Blob, meta: { filename?: string; contentType?: string; resource?: string }): Promise<string>;
  get(id: string): Promise<MediaFile | null>;
  delete(id: string): Promise<void>;
}

export interface Driver {
  readonly kind: string;
  /**
   * Whether a shared read (FindQuery.shared) hands out stored versions: the stored documents
   * themselves, which a write replaces rather than changes (the memory store), or, where a
   * projection leaves fields out, copies marked with the one they were made from (STORED_VERSION).
   * Absent: every document a read hands out is a new one (versionOf means nothing for it).
   */
  readonly sharesVersions?: boolean;
  /**
   * True when the indexes createIndexes built stay for as long as this driver is open: no other
   * client can reach the store to drop a collection or an index (the embedded store). Elsewhere
   * `unique` is looked up before each write as well as enforced by the index (src/data/layer.ts).
   */
  readonly indexesStay?: boolean;
  find(target: Target, query: FindQuery): Promise<Doc[]>;
  count(target: Target, filter: Filter): Promise<number>;
  /**
   * The number of documents in the collection as the store's own statistics keep it, without
   * counting them (MongoDB's estimatedDocumentCount); it may lag or lead the exact count.
   */
  estimatedCount(target: Target): Promise<number>;
  /**
   * All-or-nothing: if any document is rejected (for instance by a unique index) none stays
   * stored and a DuplicateKeyError is thrown. A document without `_id` gets an ObjectId, which
   * is also set on the caller's document (as the mongodb driver and pymongo do).
   */
  insertMany(target: Target, docs: Doc[]): Promise<void>;
  /** Replaces the first document matching filter; false when none matched. Atomic. */
  replaceOne(target: Target, filter: Filter, doc: Doc): Promise<boolean>;
  /** Applies update to the first document matching filter; false when none matched. Atomic. */
  updateOne(target: Target, filter: Filter, update: Update): Promise<boolean>;
  /**
   * Applies update to the first document matching filter in one atomic step, with the options'
   * stamp and requirement; the document before and after, or null when none matched.
   */
  findOneAndUpdate(target: Target, filter: Filter, update: Update, options?: ModifyOptions): Promise<Change | null>;
  /**
   * Applies update to every document matching filter (and `ids`), each atomically; the
   * changes, in natural order. All-or-nothing where the store can make it so (memory, sqlite,
   * MongoDB with transactions): a failure (a unique index, an unmet requirement) leaves every
   * document as it was. docs/drivers.md says what each driver does.
   */
  updateMany(target: Target, filter: Filter, update: Update, options?: ModifyManyOptions): Promise<Change[]>;
  deleteOne(target: Target, filter: Filter): Promise<boolean>;
  /** Deletes every document matching filter (and with one of `ids`, when given); how many. */
  deleteMany(target: Target, filter: Filter, options?: { ids?: unknown[] }): Promise<number>;
  aggregate(target: Target, pipeline: Doc[]): Promise<Doc[]>;
  /** Idempotent; a unique index makes later writes that break it throw DuplicateKeyError. */
  createIndexes(target: Target, indexes: IndexSpec[]): Promise<void>;
  /** Where indexes stay (indexesStay): drops the collection's indexes but those named; the names dropped. */
  dropIndexesBut?(target: Target, names: string[]): Promise<string[]>;
  media(database?: string): MediaStore;
  /**
   * Counts one request of a rate-limit key in the window that ends at `windowEnd` (epoch ms)
   * and returns the window's count, atomically across every process sharing the store (the
   * `"database"` RATE_LIMIT_STORE, docs/deploy.md). Counts live in the default database and are
   * dropped once their window ended; they are not documents and the change log never sees them.
   * A store that only one process serves (the embedded one) has none: its counts stay in the
   * process, where everyone who counts is.
   */
  countHit?(key: string, windowEnd: number): Promise<number>;
  /** Resolves when the store answers (readiness) for `database` (else its default) and would serve `collections`; rejects with why not. */
  ping(database?: string, collections?: readonly string[]): Promise<void>;
  /** Where a store may refuse collections (a Data API gateway's allow-list): rejects at start-up if it refuses these; unreachable is readiness' to say. */
  checkServed?(database: string, collections: readonly string[]): Promise<void>;
  /**
   * A failure the driver cannot recover from while the process runs (the memory store after its
   * journal could not be written), or null: liveness then fails, so that a supervisor restarts
   * the process (docs/deploy.md). A database that is only unreachable is no such failure.
   */
  fault?(): Error | null;
  /**
   * The change log (docs/contracts.md §3, docs/feed.md): once `record` was called for a
   * collection, every write method above records each document it changes, in the same atomic
   * step as the write where the store allows. Absent on a driver without one; a resource with
   * change_feed then refuses to start streams.
   */
  readonly changes?: ChangeLog;
  close(): Promise<void>;
}

/** The collection (a table on SQLite) where Driver.countHit keeps its counts. */
export const RATE_LIMIT_COLLECTION = "_everest_rate_limits";

export type ChangeOperation = "insert" | "update" | "replace" | "delete";

/** One changed document, as the change log keeps it. */
export interface ChangeRecord {
  /** Opaque; the log's order is commit order within a database. */
  position: string;
  collection: string;
  op: ChangeOperation;
  /** The document's `_id`. */
  id: unknown;
  /** The stored document before the change (null for an insert), and after it (null for a delete). */
  before: Doc | null;
  after: Doc | null;
  at: Date;
}

/** What reading the log after a position gives: the records that follow it, or that it is too old. */
export type ChangeRead = { expired: false; records: ChangeRecord[] } | { expired: true; head: string };

export interface ChangeLog {
  /** Records writes to this collection from now on; idempotent. */
  record(target: Target): Promise<void>;
  /** The position of the newest change of a database: a stream that starts now starts after it. */
  head(database?: string): Promise<string>;
  /**
   * The changes of a database after `after`, oldest first, at most `limit`. A position that is
   * not one of this log's throws InvalidPositionError; one older than the retention reads as expired.
   */
  read(database: string | undefined, after: string, limit: number): Promise<ChangeRead>;
  /**
   * Calls `wake` when changes may have been added: always for this driver's own writes, and for
   * other processes' writes too where `pushes` is true. Returns the function that stops it.
   */
  watch(database: string | undefined, wake: () => void): () => void;
  /** Whether `watch` hears other processes' writes; where it does not, the feed polls `read`. */
  readonly pushes: boolean;
}

/** A change-log position that is malformed or not one of this log's (rendered as 400). */
export class InvalidPositionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidPositionError";
  }
}

/** A write broke a unique index. `keyValue` names the field(s) and the value(s). */
export class DuplicateKeyError extends Error {
  readonly keyValue: Record<string, unknown>;
  constructor(keyValue: Record<string, unknown>, message?: string) {
    super(message ?? `duplicate key ${JSON.stringify(keyValue)}`);
    this.name = "DuplicateKeyError";
    this.keyValue = keyValue;
  }
}

/**
 * The database refused a filter, update or pipeline (an unknown or disallowed operator such as
 * `$where`, a malformed value): 400; 413 for a value larger than it takes (D1's 2 MB).
 */
export class InvalidQueryError extends Error {
  constructor(message: string, options?: { cause?: unknown; status?: 400 | 413 }, readonly status = options?.status ?? 400) {
    super(message, options);
    this.name = "InvalidQueryError";
  }
}

/**
 * Documents a write would have changed do not meet its `require` condition (ModifyOptions);
 * nothing was written. `documents` are those documents as they were stored.
 */
export class UnmetRequirementError extends Error {
  readonly documents: Doc[];
  constructor(documents: Doc[], message?: string) {
    super(message ?? `${documents.length} document(s) do not meet the write's requirement`);
    this.name = "UnmetRequirementError";
    this.documents = documents;
  }
}

/** The database could not be reached or failed; rendered as 503. */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DatabaseUnavailableError";
  }
}

/** The settings drivers read (Eve's names); each driver takes those it knows. */
export interface DriverSettings {
  /** Client options: MongoClient's (Eve's MONGO_OPTIONS), the Data API's `timeoutMS`. */
  DB_OPTIONS?: Record<string, unknown> | null;
  DB_WRITE_CONCERN?: Record<string, unknown> | null;
  DATA_API_KEY?: string | null;
  DATA_API_SOURCE?: string | null;
  /** The memory driver's journal compacts past this multiple of its live data (docs/drivers.md). */
  JOURNAL_COMPACTION_RATIO?: number | null;
  /** …and only once it is at least this many bytes. */
  JOURNAL_COMPACTION_MIN_SIZE?: number | null;
  /** How long the change log keeps a change, in seconds (null: no time bound). */
  CHANGE_FEED_RETENTION?: number | null;
  /** How many changes per database the change log keeps at most (null: no count bound). */
  CHANGE_FEED_RETENTION_COUNT?: number | null;
}

/** How a driver is built from a URI; registered per scheme and loaded lazily. */
export interface DriverOptions {
  uri: string;
  databaseName: string;
  settings: DriverSettings;
  /** Runtime services the adapter injects (file access for the journal, fetch, …). */
  services?: RuntimeServices;
}

/** What src/ needs from the runtime but must not import itself. */
export interface RuntimeServices {
  /** Durable append-only file access, for the memory driver's journal. */
  files?: FileAccess;
  fetch?: typeof fetch;
  /** Reads a file of the API explorer's UI package (src/openapi/explorer.ts); by default from node_modules. */
  explorerFiles?: (name: string) => Promise<Uint8Array | null>;
  /** The platform's bindings (a Worker's env), where a `d1:NAME` database URI finds its D1 database. */
  bindings?: Record<string, unknown>;
}

export interface FileAccess {
  /** The file's contents as a stream of chunks, or null when there is no such file. */
  read(path: string): Promise<AsyncIterable<Uint8Array> | null>;
  /** Appends and flushes (fsync) before resolving; creates the file (durably) when missing. */
  append(path: string, text: string): Promise<void>;
  /** Cuts the file to its first `length` bytes and flushes. */
  truncate(path: string, length: number): Promise<void>;
  /** A new file beside `path`, written piece by piece, that `commit()` puts in its place atomically. */
  replacement(path: string): Promise<FileReplacement>;
  /**
   * Makes this process the only one using `path` until `release()`. Throws FileLockedError when
   * a live process holds it; a lock left by a process that died is taken over.
   */
  lock(path: string): Promise<FileLock>;
}

export interface FileReplacement {
  write(text: string): Promise<void>;
  /** Flushes the new file, renames it over the old one and flushes the directory. */
  commit(): Promise<void>;
  /** Removes the new file; the old one stays as it was. */
  discard(): Promise<void>;
}

export interface FileLock {
  release(): Promise<void>;
}

/** Another live process holds the file (FileAccess.lock). */
export class FileLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FileLockedError";
  }
}

/** A `file:` URI where the adapter gave no FileAccess: what to pass instead. */
export class FileAccessMissingError extends Error {
  constructor(uri: string) {
    super(`'${uri}' needs file access: createHandler(settings, { services: { files: new NodeFileAccess() } }), from everest-api/node, /deno or /bun`);
    this.name = "FileAccessMissingError";
  }
}

export type DriverFactory = (options: DriverOptions) => Promise<Driver> | Driver;
