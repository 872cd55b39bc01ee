// A Data API v1 endpoint in front of any everest driver: with the native driver behind it, a
// Node process serves the protocol to edge deployments (Workers, Deno Deploy …), now that the
// hosted Atlas Data API is retired. Web-standard, so it can itself run anywhere.
//
// Every request needs an API key; unknown actions, oversized batches, requests and responses,
// and databases or collections outside the allow-lists are refused with a JSON error body
// `{ error, error_code }` (see docs/drivers.md).
import { BodyError, readTextWithin } from "../http/body.ts";
import { Binary } from "bson";
import { timingSafeEqual } from "../util/compare.ts";
import { WindowCounts } from "../util/window-counts.ts";
import { DatabaseUnavailableError, DuplicateKeyError, InvalidQueryError, RATE_LIMIT_COLLECTION, UnmetRequirementError, type Doc, type Driver, type Filter, type Target } from "../drivers/types.ts";
import { isPlainObject } from "../util/objects.ts";
import { ACTIONS, checkEncodedValues, decode, EJSON_TYPE, encode, ERROR_STATUS, type Action } from "../drivers/data-api/protocol.ts";
import {
  field,
  GatewayError,
  indexSpecs,
  isArray,
  isBinary,
  isCount,
  isDocs,
  isNames,
  isString,
  keysetRead,
  modifyOptions,
  pipelineReferences,
  projection,
  refuseScripts,
  refuseUpsert,
  required,
  sort,
  update,
  type Body,
} from "./parameters.ts";
import { changeAction, recordingOnWrite } from "./changes.ts";

export interface DataApiHandlerOptions {
  /** Keys a client may present (`api-key` header or `Authorization: Bearer`); at least one. */
  apiKeys: string[];
  /** Databases served; all when absent. */
  databases?: string[];
  /** Collections served (in any served database); all when absent. */
  collections?: string[];
  /** Most documents in one insertMany (default 1000). */
  maxBatch?: number;
  /** Largest response body in bytes (default 16 MiB); larger answers are refused, never truncated. */
  maxResponseBytes?: number;
  /** Largest request body in bytes (default 32 MiB, room for a 16 MiB media file in base64). */
  maxRequestBytes?: number;
  /** When set, requests must name this dataSource. */
  dataSource?: string;
  /** Told about failures answered 500 or 503, whose details the client does not see. */
  onError?: (error: unknown, action: string) => void;
}

export type DataApiHandler = (request: Request) => Promise<Response>;

const DEFAULTS = { maxBatch: 1000, maxResponseBytes: 16 * 1024 * 1024, maxRequestBytes: 32 * 1024 * 1024 };

/** Keys are compared as digests: equal lengths, so the time taken says nothing about a key's length. */
async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function readBody(request: Request, limit: number): Promise<string> {
  try {
    return await readTextWithin(request, limit);
  } catch (error) {
    if (!(error instanceof BodyError)) throw error;
    throw new GatewayError(error.problem === "too-large" ? "PayloadTooLarge" : "InvalidParameter", error.message);
  }
}

async function collect(content: Uint8Array | ReadableStream<Uint8Array>): Promise<Uint8Array> {
  if (content instanceof Uint8Array) return content;
  return new Uint8Array(await new Response(content).arrayBuffer());
}

export function createDataApiHandler(driver: Driver, options: DataApiHandlerOptions): DataApiHandler {
  if (options.apiKeys.length === 0 || options.apiKeys.some((key) => typeof key !== "string" || key.length === 0)) {
    throw new Error("createDataApiHandler: apiKeys must list at least one non-empty key");
  }
  const maxBatch = options.maxBatch ?? DEFAULTS.maxBatch;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULTS.maxResponseBytes;
  const maxRequestBytes = options.maxRequestBytes ?? DEFAULTS.maxRequestBytes;
  const databases = options.databases ? new Set(options.databases) : null;
  const collections = options.collections ? new Set(options.collections) : null;
  const keyDigests = Promise.all(options.apiKeys.map(sha256));
  const localCounts = new WindowCounts();

  async function authorized(request: Request): Promise<boolean> {
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    const presented = request.headers.get("api-key") ?? bearer;
    if (!presented) return false;
    const digest = await sha256(presented);
    let match = false;
    // Every key is compared, so the time taken does not tell which one matched.
    for (const key of await keyDigests) match = timingSafeEqual(digest, key) || match;
    return match;
  }

  function allow(target: Target): void {
    if (databases && !databases.has(target.database!)) throw new GatewayError("Forbidden", `database '${target.database}' is not served`);
    if (collections && !collections.has(target.collection)) throw new GatewayError("Forbidden", `collection '${target.collection}' is not served`);
  }

  function allowDatabase(database: string): void {
    if (databases && !databases.has(database)) throw new GatewayError("Forbidden", `database '${database}' is not served`);
  }

  function target(body: Body): Target {
    const result = { database: required(body, "database", isString, "a string"), collection: required(body, "collection", isString, "a string") };
    allow(result);
    return result;
  }

  function filter(body: Body): Filter {
    const given = field(body, "filter", isPlainObject, "an object") ?? {};
    refuseScripts(given);
    return given;
  }

  const keepRecording = recordingOnWrite(driver, allow);

  async function perform(action: Action, body: Body): Promise<Doc> {
    await keepRecording(body);
    switch (action) {
      case "everest.changesRecord":
      case "everest.changesHead":
      case "everest.changesRead":
        return changeAction(driver, action, body, allow, allowDatabase);
      case "find": {
        const where = target(body);
        const query = { filter: filter(body), sort: sort(body), projection: projection(body), skip: field(body, "skip", isCount, "a count"), limit: field(body, "limit", isCount, "a count") };
        return { documents: await driver.find(where, { ...query, ...keysetRead(body, query) }) };
      }
      case "findOne": {
        const where = target(body);
        const [document] = await driver.find(where, { filter: filter(body), projection: projection(body), limit: 1 });
        return { document: document ?? null };
      }
      case "insertOne": {
        const where = target(body);
        const document = required(body, "document", isPlainObject, "an object");
        await driver.insertMany(where, [document]);
        return { insertedId: document._id };
      }
      case "insertMany": {
        const where = target(body);
        const documents = required(body, "documents", isDocs, "a list of objects");
        if (documents.length === 0) throw new GatewayError("InvalidParameter", "'documents' is empty");
        if (documents.length > maxBatch) throw new GatewayError("BatchTooLarge", `at most ${maxBatch} documents per insertMany`);
        await driver.insertMany(where, documents);
        return { insertedIds: documents.map((document) => document._id) };
      }
      case "updateOne": {
        const where = target(body);
        refuseUpsert(body);
        const changes = update(body);
        refuseScripts(changes);
        const matched = await driver.updateOne(where, filter(body), changes);
        // The contract reports a match, not a change: modifiedCount can only repeat it.
        return { matchedCount: matched ? 1 : 0, modifiedCount: matched ? 1 : 0 };
      }
      case "updateMany": {
        const where = target(body);
        refuseUpsert(body);
        const changes = update(body);
        refuseScripts(changes);
        const condition = filter(body);
        // Like MongoDB's own updateMany, one document at a time, each still required to match.
        const ids = await driver.find(where, { filter: condition, projection: { _id: 1 } });
        let matched = 0;
        for (const { _id } of ids) if (await driver.updateOne(where, { $and: [{ _id }, condition] }, changes)) matched++;
        return { matchedCount: matched, modifiedCount: matched };
      }
      case "everest.findOneAndUpdate": {
        const where = target(body);
        const changes = update(body);
        refuseScripts(changes);
        return { change: await driver.findOneAndUpdate(where, filter(body), changes, modifyOptions(body)) };
      }
      case "everest.updateMany": {
        const where = target(body);
        const changes = update(body);
        refuseScripts(changes);
        // Bounded, so the answer (every document before and after) is too, and refused before anything is written.
        const ids = required(body, "ids", isArray, "a list of _id values");
        if (ids.length > maxBatch) throw new GatewayError("BatchTooLarge", `at most ${maxBatch} ids per everest.updateMany`);
        return { changes: await driver.updateMany(where, filter(body), changes, { ...modifyOptions(body), ids }) };
      }
      case "replaceOne": {
        const where = target(body);
        refuseUpsert(body);
        const replacement = required(body, "replacement", isPlainObject, "an object");
        const matched = await driver.replaceOne(where, filter(body), replacement);
        return { matchedCount: matched ? 1 : 0, modifiedCount: matched ? 1 : 0 };
      }
      case "deleteOne": {
        const where = target(body);
        return { deletedCount: (await driver.deleteOne(where, filter(body))) ? 1 : 0 };
      }
      case "deleteMany": {
        const where = target(body);
        return { deletedCount: await driver.deleteMany(where, filter(body)) };
      }
      case "aggregate": {
        const where = target(body);
        const pipeline = required(body, "pipeline", isDocs, "a list of stages");
        refuseScripts(pipeline);
        for (const reference of pipelineReferences(pipeline, where.database!)) allow(reference);
        return { documents: await driver.aggregate(where, pipeline) };
      }
      case "everest.estimatedCount": {
        return { count: await driver.estimatedCount(target(body)) };
      }
      case "everest.createIndexes": {
        const where = target(body);
        await driver.createIndexes(where, indexSpecs(body));
        return {};
      }
      case "everest.mediaPut": {
        const database = required(body, "database", isString, "a string");
        allowDatabase(database);
        const data = required(body, "data", isBinary, "binary data");
        const meta = {
          filename: field(body, "filename", isString, "a string"),
          contentType: field(body, "contentType", isString, "a string"),
          resource: field(body, "resource", isString, "a string"),
        };
        const defined = Object.fromEntries(Object.entries(meta).filter(([, value]) => value !== undefined));
        return { id: await driver.media(database).put(data.value(), defined) };
      }
      case "everest.mediaGet": {
        const database = required(body, "database", isString, "a string");
        allowDatabase(database);
        const file = await driver.media(database).get(required(body, "id", isString, "a string"));
        if (!file) return { file: null };
        const { read: _, ...description } = file;
        return { file: description };
      }
      case "everest.mediaRead": {
        const database = required(body, "database", isString, "a string");
        allowDatabase(database);
        const file = await driver.media(database).get(required(body, "id", isString, "a string"));
        if (!file) return { data: null };
        const start = field(body, "start", isCount, "a count") ?? 0;
        const end = field(body, "end", isCount, "a count") ?? file.length - 1;
        // end = start - 1 is the empty range, which is all an empty file has.
        if (end < start - 1 || end >= file.length) throw new GatewayError("InvalidParameter", `the range ${start}-${end} is outside the file's ${file.length} bytes`);
        // The bytes travel as base64 inside the answer: a third larger, with room for the rest of it.
        const most = Math.floor(((maxResponseBytes - 256) * 3) / 4);
        if (end - start + 1 > most) throw new GatewayError("ResponseTooLarge", `read at most ${most} bytes at a time`);
        return { data: new Binary(end < start ? new Uint8Array(0) : await collect(await file.read({ start, end }))) };
      }
      case "everest.countHit": {
        if (collections && !collections.has(RATE_LIMIT_COLLECTION)) throw new GatewayError("Forbidden", `collection '${RATE_LIMIT_COLLECTION}' is not served`);
        const key = required(body, "key", isString, "a string");
        const windowEnd = required(body, "windowEnd", isCount, "a count");
        // A store only this process serves counts here, where every count meets.
        return { count: driver.countHit ? await driver.countHit(key, windowEnd) : localCounts.hit(key, windowEnd, Date.now()) };
      }
      case "everest.ping": {
        // A client names the database it serves from: one the gateway does not serve is no readiness.
        const collections = field(body, "collections", isNames, "a list of names");
        const database = collections ? required(body, "database", isString, "a string") : field(body, "database", isString, "a string");
        if (database !== undefined) allowDatabase(database);
        for (const collection of collections ?? []) allow({ database, collection });
        await driver.ping();
        return {};
      }
      case "everest.mediaDelete": {
        const database = required(body, "database", isString, "a string");
        allowDatabase(database);
        await driver.media(database).delete(required(body, "id", isString, "a string"));
        return {};
      }
    }
  }

  function reply(status: number, payload: unknown, canonical: boolean, headers: Record<string, string> = {}): Response {
    const bytes = new TextEncoder().encode(encode(payload, canonical));
    if (bytes.byteLength > maxResponseBytes && status < 300) {
      return reply(ERROR_STATUS.ResponseTooLarge, { error: `the response exceeds ${maxResponseBytes} bytes; narrow the query`, error_code: "ResponseTooLarge" }, canonical);
    }
    return new Response(bytes, { status, headers: { "Content-Type": canonical ? EJSON_TYPE : "application/json", ...headers } });
  }

  function refusal(error: GatewayError, canonical: boolean, headers?: Record<string, string>): Response {
    return reply(ERROR_STATUS[error.code], { error: error.message, error_code: error.code, ...error.extra }, canonical, headers);
  }

  return async (request) => {
    const canonical = (request.headers.get("accept") ?? "").includes(EJSON_TYPE);
    let action = "";
    try {
      const name = /\/action\/([^/]+)$/.exec(new URL(request.url).pathname)?.[1];
      if (name === undefined) throw new GatewayError("NotFound", "not a Data API action URL (…/action/<name>)");
      action = name;
      if (request.method !== "POST") return refusal(new GatewayError("MethodNotAllowed", "actions are POST requests"), canonical, { Allow: "POST" });
      if (!(await authorized(request))) throw new GatewayError("InvalidSession", "a valid API key is required ('api-key' header or 'Authorization: Bearer')");
      if (!ACTIONS.has(action)) throw new GatewayError("UnknownAction", `unknown action '${action}'`);
      let body: unknown;
      try {
        const text = await readBody(request, maxRequestBytes);
        checkEncodedValues(text);
        body = decode(text);
      } catch (error) {
        if (error instanceof GatewayError) throw error;
        throw new GatewayError("InvalidParameter", `the request body is not Extended JSON: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (!isPlainObject(body)) throw new GatewayError("InvalidParameter", "the request body must be an object");
      const dataSource = required(body, "dataSource", isString, "a string");
      if (options.dataSource !== undefined && dataSource !== options.dataSource) throw new GatewayError("Forbidden", `dataSource '${dataSource}' is not served`);
      return reply(200, await perform(action as Action, body), canonical);
    } catch (error) {
      if (error instanceof GatewayError) return refusal(error, canonical);
      if (error instanceof UnmetRequirementError) return refusal(new GatewayError("UnmetRequirement", error.message, { documents: error.documents }), canonical);
      if (error instanceof DuplicateKeyError) return refusal(new GatewayError("DuplicateKey", error.message, { keyValue: error.keyValue }), canonical);
      if (error instanceof InvalidQueryError) return refusal(new GatewayError("InvalidQuery", error.message), canonical);
      options.onError?.(error, action);
      if (error instanceof DatabaseUnavailableError) return refusal(new GatewayError("DatabaseUnavailable", "the database is unavailable"), canonical);
      return refusal(new GatewayError("InternalServerError", "internal error"), canonical);
    }
  };
}
