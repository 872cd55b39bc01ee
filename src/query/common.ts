// JSON in query parameters, and Eve's cast of untyped query strings.
import { ObjectId } from "bson";
import { parseDate } from "../render/dates.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { isObjectIdHex } from "../util/objectid.ts";
import { levelsOf } from "../http/json-shape.ts";
import { badRequest } from "../errors.ts";

/**
 * Refuses a sort or projection path with more parts than MAX_JSON_DEPTH allows a body: each part
 * is a level a store walks (a projection of 20,000 parts overflowed the stack after seconds).
 */
export function refuseDeepPath(field: string, maxDepth: number, parameter: string): void {
  if (levelsOf(field) > maxDepth) throw badRequest(`${parameter} path too deep`);
}

/** JSON.parse without throwing: `undefined` when the text is not JSON. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Eve's `_mongotize` of a string no schema types: a DATE_FORMAT date is a datetime, 24 hex digits
 * an ObjectId (unless the resource's query_objectid_as_string), anything else stays a string.
 */
export function castUntyped(text: string, resource: Resource, config: Config): unknown {
  const date = parseDate(text, config.DATE_FORMAT);
  if (date) return date;
  return !resource.query_objectid_as_string && isObjectIdHex(text) ? new ObjectId(text) : text;
}
