// Query operators: those MongoDB knows in a filter, and those no client may send whatever the
// settings say; what a `where` (src/query/where.ts) and a datasource filter (src/settings/validate.ts) refuse.
import { isPlainObject } from "./objects.ts";

/** Server-side JavaScript: code that would run on the database server. */
export const SCRIPT_OPERATORS: ReadonlySet<string> = new Set(["$where", "$function", "$accumulator"]);

/** Aggregation stages that read or write collections other than the endpoint's own. */
export const CROSS_COLLECTION_OPERATORS: ReadonlySet<string> = new Set(["$lookup", "$graphLookup", "$unionWith", "$out", "$merge"]);

/**
 * Expressions a client's aggregation parameter may not hold. `$range`, `$reduce`, `$let`, `$map`
 * and `$replaceAll` build values without a bound (a `$range` of 10^8, a string doubled at each
 * step, nested maps or replacements each multiplying the last, ran the embedded store's process
 * out of heap, where MongoDB stops a stage at 100 MB); `$getField`, `$setField` and `$unsetField`
 * name a field by a plain string, which read rules do not see as a path.
 */
export const UNBOUNDED_PARAMETER_OPERATORS: ReadonlySet<string> = new Set(["$range", "$reduce", "$let", "$map", "$replaceAll", "$getField", "$setField", "$unsetField"]);

/** Eve's `Mongo.operators`: anything else needs the query whitelist. */
const KNOWN_OPERATORS = new Set([
  "$gt", "$gte", "$in", "$lt", "$lte", "$ne", "$nin", "$eq",
  "$or", "$and", "$not", "$nor",
  "$mod", "$regex", "$text", "$where",
  "$options", "$search", "$language", "$caseSensitive",
  "$diacriticSensitive", "$exists", "$type",
  "$geoWithin", "$geoIntersects", "$near", "$nearSphere", "$centerSphere",
  "$geometry", "$maxDistance", "$minDistance", "$box",
  "$all", "$elemMatch", "$size",
  "$bitsAllClear", "$bitsAllSet", "$bitsAnyClear", "$bitsAnySet",
  "$center", "$expr",
]);

/**
 * MongoDB operators beyond Eve's list that every store runs: a settings' datasource filter may
 * use them as it is, a client's `where` only where DB_QUERY_WHITELIST names them, as in Eve.
 */
const SETTINGS_FILTER_OPERATORS: ReadonlySet<string> = new Set(["$polygon", "$comment"]);

/** Why a where clause may not use `key`, or null (also for a key that is no operator). */
export function operatorRefusal(key: string, blacklist: Set<string>, whitelist: Set<string>): string | null {
  if (!key.startsWith("$")) return null;
  if (SCRIPT_OPERATORS.has(key) || blacklist.has(key)) return `operator ${key} is banned`;
  return KNOWN_OPERATORS.has(key) || whitelist.has(key) ? null : `unknown operator ${key}`;
}

/**
 * Why a datasource filter cannot be run, or null: an operator MongoDB does not know (nor the
 * resource's whitelist), or server-side JavaScript, which every read of the resource would
 * fail on. DB_QUERY_BLACKLIST guards what clients send, not the settings: a `$regex` there runs.
 */
export function datasourceFilterRefusal(filter: unknown, whitelist: Set<string>): string | null {
  if (!isPlainObject(filter) && !Array.isArray(filter)) return null;
  for (const [key, value] of Object.entries(filter)) {
    const refusal = (Array.isArray(filter) || SETTINGS_FILTER_OPERATORS.has(key) ? null : operatorRefusal(key, NONE, whitelist)) ?? datasourceFilterRefusal(value, whitelist);
    if (refusal) return refusal;
  }
  return null;
}
const NONE = new Set<string>();

/** The operators a resource allows beyond Eve's (its own whitelist, else DB_QUERY_WHITELIST). */
export function queryWhitelist(raw: { db_query_whitelist?: unknown; mongo_query_whitelist?: unknown }, global: string[]): Set<string> {
  const list = raw.db_query_whitelist ?? raw.mongo_query_whitelist ?? global;
  return new Set(Array.isArray(list) ? list : []);
}
