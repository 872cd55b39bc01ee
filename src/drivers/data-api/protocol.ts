// The MongoDB Data API v1 wire format, shared by the data-api driver and the gateway: action
// names, error codes and the Extended JSON codec. Web-standard only (it runs on Workers).
import { BSONRegExp, EJSON } from "bson";
import { InvalidQueryError } from "../types.ts";
import { isPlainObject } from "../../util/objects.ts";

/** The actions of the Data API v1 protocol. */
export const STANDARD_ACTIONS = [
  "find",
  "findOne",
  "insertOne",
  "insertMany",
  "updateOne",
  "updateMany",
  "replaceOne",
  "deleteOne",
  "deleteMany",
  "aggregate",
] as const;

/**
 * everest's extensions, for what the protocol cannot express. The `everest.` prefix keeps them
 * apart from any action the protocol has or might have had.
 */
export const EXTENSION_ACTIONS = [
  "everest.createIndexes",
  "everest.estimatedCount",
  "everest.findOneAndUpdate",
  "everest.updateMany",
  "everest.mediaPut",
  "everest.mediaGet",
  "everest.mediaRead",
  "everest.mediaDelete",
  "everest.countHit",
  "everest.ping",
  // The change log (docs/feed.md): what a feed over the data-api driver reads, by polling.
  "everest.changesRecord",
  "everest.changesHead",
  "everest.changesRead",
] as const;

/**
 * everest's extension of `find` for keyset reads (FindQuery.after): the position, beside a
 * standard `filter` of the form `{$and: [<filter>, <the position as a filter>]}` and a `sort`
 * naming `_id` last. An endpoint that knows it reads the page in MongoDB's order from the
 * position with the first filter alone; any other reads the standard filter and sort, which
 * give the same page on MongoDB.
 */
export const KEYSET_POSITION = "everest.after";

export type Action = (typeof STANDARD_ACTIONS)[number] | (typeof EXTENSION_ACTIONS)[number];

export const ACTIONS: ReadonlySet<string> = new Set<string>([...STANDARD_ACTIONS, ...EXTENSION_ACTIONS]);

/** `error_code` values of an error body `{ error, error_code }`, with their HTTP status. */
export const ERROR_STATUS = {
  InvalidParameter: 400,
  MissingParameter: 400,
  UnknownAction: 400,
  InvalidQuery: 400,
  /** A change-log position that is malformed or not the log's. */
  InvalidPosition: 400,
  InvalidSession: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  DuplicateKey: 409,
  /** everest.findOneAndUpdate / everest.updateMany: documents that do not meet `require`, nothing written. */
  UnmetRequirement: 412,
  PayloadTooLarge: 413,
  BatchTooLarge: 413,
  ResponseTooLarge: 413,
  InternalServerError: 500,
  DatabaseUnavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  error: string;
  error_code: ErrorCode;
  /** With DuplicateKey: the field(s) and value(s) the unique index refused. */
  keyValue?: Record<string, unknown>;
  /** With UnmetRequirement: the documents, as stored, that do not meet it. */
  documents?: Array<Record<string, unknown>>;
}

/** The media type of canonical Extended JSON bodies. */
export const EJSON_TYPE = "application/ejson";

/** Canonical Extended JSON keeps every BSON type (and int vs double) across the wire. */
export function encode(value: unknown, canonical = true): string {
  return EJSON.stringify(value, { relaxed: !canonical });
}

/**
 * Extended JSON → everest's canonical values: ObjectId, Date, Decimal128 and Binary come back as
 * bson objects, numbers as plain numbers (relaxed parsing) and regular expressions as RegExp
 * where JavaScript can express them, as the native driver returns them.
 */
export function decode(text: string): unknown {
  const value: unknown = EJSON.parse(text, { relaxed: true });
  return text.includes('"$regularExpression"') || text.includes('"$regex"') ? nativeRegExps(value) : value;
}

const DATE_TEXT = /"\$date"\s*:\s*"((?:[^"\\]|\\.)*)"/g;
const BINARY_TEXT = /"\$binary"\s*:\s*(?:\{[^{}]*?"base64"\s*:\s*)?"((?:[^"\\]|\\.)*)"/g;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * bson reads a `$date` text that is no date as the epoch, and skips the characters of a
 * `$binary` that are not base64: the gateway refuses a request holding such values, as bson
 * refuses a bad `$oid`, before anything is stored.
 */
export function checkEncodedValues(text: string): void {
  if (text.includes('"$date"')) {
    for (const [, date] of text.matchAll(DATE_TEXT)) if (Number.isNaN(Date.parse(date!))) throw new Error(`'${date}' is not a date`);
  }
  if (text.includes('"$binary"')) {
    for (const [, data] of text.matchAll(BINARY_TEXT)) if (!BASE64.test(data!)) throw new Error("a $binary value is not base64");
  }
}

/** Assigns without ever reaching a prototype, whatever the key (`__proto__` included). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** BSON options JavaScript shares; `x` and `l` have no equivalent, so such patterns stay BSONRegExp. */
const JS_REGEX_OPTIONS = /^[imsu]*$/;

function nativeRegExps(value: unknown): unknown {
  if (value instanceof BSONRegExp) {
    if (!JS_REGEX_OPTIONS.test(value.options)) return value;
    try {
      return new RegExp(value.pattern, value.options);
    } catch {
      // Valid for the database's regex engine, not for JavaScript's: left for the driver to judge.
      return value;
    }
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = nativeRegExps(value[i]);
  } else if (isPlainObject(value)) {
    for (const [key, inner] of Object.entries(value)) {
      const next = nativeRegExps(inner);
      if (next !== inner) setOwn(value, key, next);
    }
  }
  return value;
}

/**
 * Extended JSON reads `{"$regex": "…"}` as a legacy regular-expression literal, which would
 * swallow the query operators beside it (`$options`, `$ne` …). A `$regex` operator with a string
 * pattern is therefore sent with a regex value, `{ $regex: /…/ }`, which MongoDB accepts as well.
 */
export function protectRegexOperators(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(protectRegexOperators);
  if (!isPlainObject(value)) return value;
  const pattern = value.$regex;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (typeof pattern === "string" && (key === "$regex" || key === "$options")) continue;
    setOwn(out, key, protectRegexOperators(inner));
  }
  if (typeof pattern === "string") {
    const options = typeof value.$options === "string" ? value.$options : undefined;
    try {
      out.$regex = new BSONRegExp(pattern, options);
    } catch (error) {
      throw new InvalidQueryError(`invalid $options '${options}' for $regex`, { cause: error });
    }
  }
  return out;
}

