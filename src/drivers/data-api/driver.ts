// The data-api driver: the contract over the MongoDB Data API v1 protocol, with nothing but
// fetch, so it runs wherever everest does (Workers, Deno, Bun, Node). Counts go through
// `aggregate`; indexes and media use everest's extension actions (see docs/drivers.md).
import { Binary, BSONError, ObjectId } from "bson";
import {
  DatabaseUnavailableError,
  DuplicateKeyError,
  InvalidPositionError,
  InvalidQueryError,
  UnmetRequirementError,
  type Change,
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
import { isPlainObject } from "../../util/objects.ts";
import { keysetFilter } from "../keyset-filter.ts";
import { DataApiChangeLog } from "./changes.ts";
import { decode, EJSON_TYPE, encode, KEYSET_POSITION, protectRegexOperators, type Action } from "./protocol.ts";

/** The actions that change no document; after any other, this process's feed looks for changes at once. */
const READ_ACTIONS = new Set<string>(["find", "findOne", "aggregate", "everest.createIndexes", "everest.changesRecord", "everest.changesHead", "everest.changesRead"]);

/** Bytes per media read: a range the gateway answers well within its response cap. */
const MEDIA_CHUNK = 1024 * 1024;

export interface DataApiDriverOptions {
  /** The endpoint's base URL; actions are POSTed to `{url}/action/{name}`. */
  url: string;
  /** The database a Target without `database` refers to. */
  databaseName: string;
  /** The `dataSource` every request names (the linked cluster's name). */
  dataSource: string;
  /** Sent as the `api-key` header; a value starting with "Bearer " goes in `Authorization` instead. */
  apiKey?: string;
  fetch: typeof fetch;
  /** Each request, body included, is abandoned after this long and reported as unavailable. */
  timeoutMs: number;
}

/** How the gateway (or any Data API endpoint) said no, in the contract's terms. */
function failure(action: string, status: number, payload: unknown): Error {
  const body = isPlainObject(payload) ? payload : {};
  const code = typeof body.error_code === "string" ? body.error_code : undefined;
  const message = `the Data API refused ${action} (${status}${code ? ` ${code}` : ""}): ${typeof body.error === "string" ? body.error : "no message"}`;
  if (code === "UnmetRequirement") return new UnmetRequirementError(Array.isArray(body.documents) ? (body.documents as Doc[]) : [], message);
  if (status === 409 || code === "DuplicateKey") {
    return new DuplicateKeyError(isPlainObject(body.keyValue) ? body.keyValue : {}, message);
  }
  // An endpoint without everest's extensions: a deployment problem, not a bad query.
  if (code === "UnknownAction") return new UnknownActionError(message);
  if (code === "InvalidPosition") return new InvalidPositionError(message);
  if (code === "ResponseTooLarge") return new ResponseTooLargeError(message);
  if (status === 400 || status === 413) return new InvalidQueryError(message);
  if (status === 401 || status === 403) return new RefusedError(message);
  if ([404, 408, 429, 502, 503, 504].includes(status)) return new DatabaseUnavailableError(message);
  return new Error(message);
}

/** The endpoint does not know an action (one of everest's extensions, on an endpoint that is not everest's gateway). */
class UnknownActionError extends Error {}

/** The gateway refuses this key, database or collection: no retry mends it, but a request still answers 503. */
class RefusedError extends DatabaseUnavailableError {}

/** The answer would pass the gateway's response cap: a media read asks for less. */
class ResponseTooLargeError extends InvalidQueryError {}

/** The smallest media range asked for: a cap below it is not worth streaming through. */
const MEDIA_CHUNK_MIN = 4096;

function documents(result: Doc, field: string): Doc[] {
  const value = result[field];
  if (!Array.isArray(value)) throw new Error(`the Data API answer has no '${field}' list`);
  return value as Doc[];
}

function count(result: Doc, field: string): number {
  const value = result[field];
  if (typeof value !== "number") throw new Error(`the Data API answer has no '${field}' count`);
  return value;
}

/** A write's options as the gateway takes them: the stamp by what it hashes, since code cannot cross. */
function modifyOptions(options: ModifyOptions): Doc {
  return {
    ...(options.stamp ? { stamp: { field: options.stamp.field, ignore: options.stamp.ignore } } : {}),
    ...(options.require ? { require: options.require } : {}),
  };
}

function changeOf(value: unknown): Change {
  if (!isPlainObject(value) || !isPlainObject(value.before) || !isPlainObject(value.after)) throw new Error("the Data API answer has a change without 'before' and 'after'");
  return { before: value.before, after: value.after };
}

export class DataApiDriver implements Driver {
  readonly kind = "data-api";
  private readonly base: string;
  private readonly headers: Record<string, string>;
  readonly changes: DataApiChangeLog;
  /** Bytes per media read: 1 MiB, less once the gateway's response cap proved smaller. */
  private mediaChunk = MEDIA_CHUNK;

  constructor(private readonly options: DataApiDriverOptions) {
    this.base = options.url.replace(/\/+$/, "");
    this.headers = { "Content-Type": EJSON_TYPE, Accept: EJSON_TYPE };
    const key = options.apiKey;
    if (key?.startsWith("Bearer ")) this.headers.Authorization = key;
    else if (key) this.headers["api-key"] = key;
    this.changes = new DataApiChangeLog((action, body) => this.call(action, body), options.databaseName);
  }

  async find(target: Target, query: FindQuery): Promise<Doc[]> {
    const keyset = query.after !== undefined && query.sort?.length ? { [KEYSET_POSITION]: query.after } : {};
    const result = await this.call("find", {
      ...this.target(target),
      filter: query.after && query.sort?.length ? { $and: [query.filter, keysetFilter(query.sort, query.after)] } : query.filter,
      ...keyset,
      ...(query.projection && Object.keys(query.projection).length > 0 ? { projection: query.projection } : {}),
      ...(query.sort?.length ? { sort: Object.fromEntries(query.sort) } : {}),
      ...(query.skip && query.skip > 0 ? { skip: query.skip } : {}),
      ...(query.limit && query.limit > 0 ? { limit: query.limit } : {}),
    });
    return documents(result, "documents");
  }

  async count(target: Target, filter: Filter): Promise<number> {
    // $match refuses $near as countDocuments does; the same documents are counted with $geoWithin.
    const [first] = await this.aggregate(target, [{ $match: nearAsWithin(filter) }, { $count: "count" }]);
    return typeof first?.count === "number" ? first.count : 0;
  }

  /** everest's gateway answers from its driver's statistics; any other endpoint counts. */
  async estimatedCount(target: Target): Promise<number> {
    try {
      return count(await this.call("everest.estimatedCount", this.target(target)), "count");
    } catch (error) {
      if (error instanceof UnknownActionError) return this.count(target, {});
      throw error;
    }
  }

  async insertMany(target: Target, docs: Doc[]): Promise<void> {
    if (docs.length === 0) return;
    for (const doc of docs) if (doc._id === undefined) doc._id = new ObjectId();
    await this.call("insertMany", { ...this.target(target), documents: docs });
  }

  async replaceOne(target: Target, filter: Filter, doc: Doc): Promise<boolean> {
    const result = await this.call("replaceOne", { ...this.target(target), filter, replacement: doc });
    return count(result, "matchedCount") > 0;
  }

  async updateOne(target: Target, filter: Filter, update: Update): Promise<boolean> {
    const result = await this.call("updateOne", { ...this.target(target), filter, update });
    return count(result, "matchedCount") > 0;
  }

  async findOneAndUpdate(target: Target, filter: Filter, update: Update, options: ModifyOptions = {}): Promise<Change | null> {
    const { change } = await this.call("everest.findOneAndUpdate", { ...this.target(target), filter, update, ...modifyOptions(options) });
    return change === null ? null : changeOf(change);
  }

  /**
   * The gateway takes the ids to change (at most its batch size, so its answer stays bounded);
   * without them, those matching now are looked up first, and one inserted in between is left out.
   */
  async updateMany(target: Target, filter: Filter, update: Update, options: ModifyManyOptions = {}): Promise<Change[]> {
    const ids = options.ids ?? (await this.find(target, { filter, projection: { _id: 1 } })).map((doc) => doc._id);
    const result = await this.call("everest.updateMany", { ...this.target(target), filter, update, ...modifyOptions(options), ids });
    return documents(result, "changes").map(changeOf);
  }

  async deleteOne(target: Target, filter: Filter): Promise<boolean> {
    const result = await this.call("deleteOne", { ...this.target(target), filter });
    return count(result, "deletedCount") > 0;
  }

  async deleteMany(target: Target, filter: Filter, options: { ids?: unknown[] } = {}): Promise<number> {
    const result = await this.call("deleteMany", { ...this.target(target), filter: options.ids ? { $and: [filter, { _id: { $in: options.ids } }] } : filter });
    return count(result, "deletedCount");
  }

  async aggregate(target: Target, pipeline: Doc[]): Promise<Doc[]> {
    const result = await this.call("aggregate", { ...this.target(target), pipeline });
    return documents(result, "documents");
  }

  async createIndexes(target: Target, indexes: IndexSpec[]): Promise<void> {
    if (indexes.length === 0) return;
    await this.call("everest.createIndexes", { ...this.target(target), indexes });
  }

  media(database?: string): MediaStore {
    const scope = { database: database ?? this.options.databaseName };
    return {
      put: async (data, meta) => {
        // The protocol carries bytes inside the JSON body, so an upload is read whole first.
        const bytes = data instanceof Uint8Array ? data : new Uint8Array(await data.arrayBuffer());
        const result = await this.call("everest.mediaPut", { ...scope, ...meta, data: new Binary(bytes) });
        if (typeof result.id !== "string") throw new Error("the Data API answer has no media id");
        return result.id;
      },
      get: async (id) => {
        const { file } = await this.call("everest.mediaGet", { ...scope, id });
        if (file === null) return null;
        if (!isPlainObject(file) || typeof file.length !== "number" || !(file.uploadDate instanceof Date)) {
          throw new Error("the Data API answer has no media file description");
        }
        const { length } = file;
        const media: MediaFile = {
          id,
          ...(typeof file.filename === "string" ? { filename: file.filename } : {}),
          contentType: String(file.contentType),
          length,
          uploadDate: file.uploadDate,
          read: (range) => this.readMedia(scope.database, id, range?.start ?? 0, range ? range.end : length - 1),
        };
        return media;
      },
      delete: async (id) => {
        await this.call("everest.mediaDelete", { ...scope, id });
      },
    };
  }

  /** Counted by the gateway's own driver (everest's extension action). */
  async countHit(key: string, windowEnd: number): Promise<number> {
    return count(await this.call("everest.countHit", { key, windowEnd }), "count");
  }

  async checkServed(database: string, collections: readonly string[]): Promise<void> {
    try {
      await this.ping(database, collections);
    } catch (error) {
      // A gateway not reached yet is readiness' to report; one that refuses these never serves them.
      if (error instanceof RefusedError) throw error;
    }
  }

  async ping(database?: string, collections?: readonly string[]): Promise<void> {
    await this.call("everest.ping", { database: database ?? this.options.databaseName, ...(collections ? { collections } : {}) });
  }

  async close(): Promise<void> {
    // Nothing is held open between requests.
  }

  /** Bytes [start, end] of a media file, streamed in ranges small enough for any response cap. */
  private readMedia(database: string, id: string, start: number, end: number): ReadableStream<Uint8Array> {
    let next = start;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (next > end) {
          controller.close();
          return;
        }
        for (;;) {
          const last = Math.min(end, next + this.mediaChunk - 1);
          try {
            const { data } = await this.call("everest.mediaRead", { database, id, start: next, end: last });
            if (!(data instanceof Binary)) throw new Error(`media file ${id} is no longer stored`);
            next = last + 1;
            controller.enqueue(data.value());
            return;
          } catch (error) {
            // A gateway whose response cap is below the range: ask it for less, from now on.
            if (error instanceof ResponseTooLargeError && this.mediaChunk > MEDIA_CHUNK_MIN) {
              this.mediaChunk = Math.max(MEDIA_CHUNK_MIN, this.mediaChunk >> 1);
              continue;
            }
            controller.error(error);
            return;
          }
        }
      },
    });
  }

  private target(target: Target): { database: string; collection: string } {
    return { database: target.database ?? this.options.databaseName, collection: target.collection };
  }

  private payload(body: Doc): Doc {
    const payload: Doc = { dataSource: this.options.dataSource, ...body };
    for (const field of ["filter", "update", "pipeline", "require"]) {
      if (payload[field] !== undefined) payload[field] = protectRegexOperators(payload[field]);
    }
    return payload;
  }

  private async call(action: Action, body: Doc): Promise<Doc> {
    let request: string;
    // A write of a collection this process records says so: the gateway then records it, also
    // after a restart that lost what it had been asked (src/gateway/changes.ts, recordingOnWrite).
    const recorded = !READ_ACTIONS.has(action) && typeof body.collection === "string" && this.changes.records({ database: body.database as string, collection: body.collection });
    try {
      request = encode(this.payload(recorded ? { ...body, recorded: true } : body));
    } catch (error) {
      // What BSON cannot hold (a regex flag it lacks, a cycle) is the query's fault, as with the mongodb driver.
      if (error instanceof BSONError) throw new InvalidQueryError(error.message, { cause: error });
      throw error;
    }
    let status: number;
    let text: string;
    try {
      const response = await this.options.fetch(`${this.base}/action/${action}`, {
        method: "POST",
        headers: this.headers,
        body: request,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      throw new DatabaseUnavailableError(`the Data API at ${this.base} did not answer ${action}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    let payload: unknown = null;
    try {
      payload = text ? decode(text) : null;
    } catch {
      // Not Extended JSON (a proxy's error page, say): reported below by status.
    }
    if (status < 200 || status > 299) throw failure(action, status, payload);
    if (!isPlainObject(payload)) throw new Error(`the Data API answered ${action} with a body that is not an Extended JSON object`);
    if (!READ_ACTIONS.has(action) && typeof body.collection === "string") this.changes.written({ database: body.database as string, collection: body.collection });
    return payload;
  }
}
