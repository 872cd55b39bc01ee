// The parameters of a Data API request body, checked: each helper returns the value in the
// contract's terms or throws a GatewayError naming the parameter and what it must be.
import { Binary } from "bson";
import type { Doc, Filter, IndexSpec, ModifyOptions, Projection, Sort, Target, Update } from "../drivers/types.ts";
import { etagStamp } from "../render/etag.ts";
import { KEYSET_POSITION, type ErrorBody, type ErrorCode } from "../drivers/data-api/protocol.ts";
import { isPlainObject } from "../util/objects.ts";
import { SCRIPT_OPERATORS } from "../util/operators.ts";

export class GatewayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Partial<ErrorBody> = {},
  ) {
    super(message);
  }
}

export type Body = Record<string, unknown>;

export function field<T>(body: Body, name: string, check: (value: unknown) => value is T, expected: string): T | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (!check(value)) throw new GatewayError("InvalidParameter", `'${name}' must be ${expected}`);
  return value;
}

export function required<T>(body: Body, name: string, check: (value: unknown) => value is T, expected: string): T {
  const value = field(body, name, check, expected);
  if (value === undefined) throw new GatewayError("MissingParameter", `'${name}' is required`);
  return value;
}

export const isString = (value: unknown): value is string => typeof value === "string";
export const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
export const isBoolean = (value: unknown): value is boolean => typeof value === "boolean";
export const isArray = (value: unknown): value is unknown[] => Array.isArray(value);
export const isDocs = (value: unknown): value is Doc[] => Array.isArray(value) && value.every(isPlainObject);
export const isBinary = (value: unknown): value is Binary => value instanceof Binary;

export function projection(body: Body): Projection | undefined {
  const given = field(body, "projection", isPlainObject, "an object");
  if (!given) return undefined;
  const result: Projection = {};
  for (const [path, value] of Object.entries(given)) {
    if (value !== 0 && value !== 1 && typeof value !== "boolean") throw new GatewayError("InvalidParameter", "projection values must be 0 or 1");
    result[path] = value ? 1 : 0;
  }
  return result;
}

export function sort(body: Body): Sort | undefined {
  const given = field(body, "sort", isPlainObject, "an object");
  if (!given) return undefined;
  return Object.entries(given).map(([path, direction]) => {
    if (direction !== 1 && direction !== -1) throw new GatewayError("InvalidParameter", "sort directions must be 1 or -1");
    return [path, direction];
  });
}

export function update(body: Body): Update {
  const given = required(body, "update", isPlainObject, "an object");
  if (Object.keys(given).some((key) => !key.startsWith("$"))) throw new GatewayError("InvalidParameter", "'update' must consist of update operators");
  return given as Update;
}

/**
 * A keyset read (protocol.ts KEYSET_POSITION): the position, and the filter without the
 * position's own conditions, which the driver applies in its order instead; nothing otherwise.
 */
export function keysetRead(body: Body, query: { filter: Filter; sort?: Sort }): { after?: Doc | null; filter?: Filter } {
  if (!(KEYSET_POSITION in body)) return {};
  const after = body[KEYSET_POSITION];
  if (after !== null && !isPlainObject(after)) throw new GatewayError("InvalidParameter", `'${KEYSET_POSITION}' must be null or an object`);
  const last = query.sort?.[query.sort.length - 1];
  if (!last || last[0] !== "_id") throw new GatewayError("InvalidParameter", `'${KEYSET_POSITION}' needs a 'sort' whose last key is _id`);
  if (after === null) return { after };
  const parts = query.filter.$and;
  if (!Array.isArray(parts) || parts.length !== 2 || !isPlainObject(parts[0]) || Object.keys(query.filter).length !== 1) {
    throw new GatewayError("InvalidParameter", `with '${KEYSET_POSITION}', 'filter' must be {$and: [filter, position]}`);
  }
  return { after, filter: parts[0] };
}

export function refuseUpsert(body: Body): void {
  if (field(body, "upsert", isBoolean, "a boolean")) throw new GatewayError("InvalidParameter", "upsert is not supported by this gateway");
}

export function indexSpecs(body: Body): IndexSpec[] {
  const given = required(body, "indexes", isArray, "a list");
  const directions = new Set<unknown>([1, -1, "2dsphere", "2d", "text", "hashed"]);
  return given.map((spec) => {
    const keys = isPlainObject(spec) ? spec.keys : undefined;
    const valid =
      isPlainObject(spec) &&
      Array.isArray(keys) &&
      keys.length > 0 &&
      keys.every((key) => Array.isArray(key) && key.length === 2 && typeof key[0] === "string" && directions.has(key[1])) &&
      (spec.name === undefined || typeof spec.name === "string") &&
      (spec.unique === undefined || typeof spec.unique === "boolean") &&
      (spec.sparse === undefined || typeof spec.sparse === "boolean");
    if (!valid) throw new GatewayError("InvalidParameter", "each index needs 'keys' as [field, direction] pairs and optional 'name', 'unique', 'sparse'");
    return spec as unknown as IndexSpec;
  });
}

/** Collections a pipeline reads or writes besides its own, and where. */
export function pipelineReferences(stages: unknown[], database: string): Target[] {
  const found: Target[] = [];
  const named = (value: unknown): void => {
    if (typeof value === "string") found.push({ database, collection: value });
    else if (isPlainObject(value) && typeof value.coll === "string") {
      found.push({ database: typeof value.db === "string" ? value.db : database, collection: value.coll });
    }
  };
  const visit = (pipeline: unknown): void => {
    if (!Array.isArray(pipeline)) return;
    for (const stage of pipeline) {
      if (!isPlainObject(stage)) continue;
      for (const [name, spec] of Object.entries(stage)) {
        if (name === "$out") named(spec);
        else if (name === "$unionWith") {
          named(spec);
          if (isPlainObject(spec)) visit(spec.pipeline);
        } else if (isPlainObject(spec) && (name === "$lookup" || name === "$graphLookup")) {
          named(spec.from);
          visit(spec.pipeline);
        } else if (name === "$merge") named(isPlainObject(spec) ? spec.into : spec);
        else if (name === "$facet" && isPlainObject(spec)) for (const inner of Object.values(spec)) visit(inner);
      }
    }
  };
  visit(stages);
  return found;
}

export function refuseScripts(value: unknown): void {
  if (Array.isArray(value)) {
    for (const element of value) refuseScripts(element);
  } else if (isPlainObject(value)) {
    for (const [key, inner] of Object.entries(value)) {
      if (SCRIPT_OPERATORS.has(key)) throw new GatewayError("InvalidQuery", `the ${key} operator is not allowed`);
      refuseScripts(inner);
    }
  }
}

export const isNames = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);

/** The options of everest.findOneAndUpdate / everest.updateMany: the ETag stamp is made here, from what it hashes. */
export function modifyOptions(body: Body): ModifyOptions {
  const options: ModifyOptions = {};
  const stamp = field(body, "stamp", isPlainObject, "an object");
  if (stamp) {
    const name = stamp.field;
    const ignore = stamp.ignore ?? null;
    if (typeof name !== "string" || name.length === 0 || (ignore !== null && !isNames(ignore))) {
      throw new GatewayError("InvalidParameter", "'stamp' must be {field: name, ignore: [names] or null}");
    }
    options.stamp = etagStamp(name, ignore);
  }
  const require = field(body, "require", isPlainObject, "an object");
  if (require) {
    refuseScripts(require);
    options.require = require;
  }
  return options;
}
