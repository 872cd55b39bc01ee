// Guards shared by the query-parameter parsers, and Eve's cast of untyped query strings.
import { ObjectId } from "bson";
import { parseDate } from "../render/dates.ts";
import type { Config, Resource } from "../settings/normalize.ts";

const PROTOTYPE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** A key, or a segment of a dotted key, that could reach an object's prototype downstream. */
export function isPrototypeKey(key: string): boolean {
  return key.split(".").some((part) => PROTOTYPE_KEYS.has(part));
}

/** An object literal (as JSON.parse and the Python-style parser build them). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** JSON.parse without throwing: `undefined` when the text is not JSON. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const HEX24 = /^[0-9a-fA-F]{24}$/;

/**
 * Eve's `_mongotize` of a string no schema types: a DATE_FORMAT date is a datetime, 24 hex digits
 * an ObjectId (unless the resource's query_objectid_as_string), anything else stays a string.
 */
export function castUntyped(text: string, resource: Resource, config: Config): unknown {
  const date = parseDate(text, config.DATE_FORMAT);
  if (date) return date;
  return !resource.query_objectid_as_string && HEX24.test(text) ? new ObjectId(text) : text;
}
