// The schema types: how each is recognised, how an incoming value is converted to it before
// validation (docs/decisions.md §3, Eve's data layer serializers), and which JSON Schema type
// expresses it when one does.
import { DBRef, Decimal128, ObjectId } from "bson";
import { parseDate } from "../render/dates.ts";
import { GEO_TYPES, geoTest, type GeoTypeName } from "./geo.ts";
import type { Doc } from "../drivers/types.ts";
import { isPlainObject } from "../util/objects.ts";
import { isObjectIdHex } from "../util/objectid.ts";

export type JsonType = "string" | "integer" | "number" | "boolean" | "array" | "object";

export interface DataType {
  test(value: unknown): boolean;
  /** The value converted to this type, or the value itself when it does not convert. */
  convert?(value: unknown): unknown;
  /** The JSON Schema type that accepts exactly this type's values, when there is one. */
  json?: JsonType;
}

export function bsonType(value: unknown): string | undefined {
  return typeof value === "object" && value !== null ? (value as { _bsontype?: string })._bsontype : undefined;
}


const INTEGER = /^\s*[+-]?\d+\s*$/;
const NUMBER = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;
const BOOLEANS: Record<string, boolean> = { true: true, "1": true, false: false, "0": false };

/** A numeric string as its number; one too large for a double ("1e999") stays text, and fails its type. */
function toNumber(value: unknown): unknown {
  if (typeof value !== "string" || !NUMBER.test(value)) return value;
  const n = Number(value);
  return Number.isFinite(n) ? n : value;
}

function toInteger(value: unknown): unknown {
  if (typeof value !== "string" || !INTEGER.test(value)) return value;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value;
}

function toBoolean(value: unknown): unknown {
  if (typeof value === "number" && (value === 0 || value === 1)) return value === 1;
  if (typeof value === "string") {
    const converted = BOOLEANS[value.toLowerCase()];
    if (converted !== undefined) return converted;
  }
  return value;
}

function toDecimal(value: unknown): unknown {
  if ((typeof value !== "string" && typeof value !== "number") || (typeof value === "number" && !Number.isFinite(value))) return value;
  try {
    return Decimal128.fromString(String(value).trim());
  } catch {
    return value;
  }
}

const DBREF_KEYS = new Set(["$col", "$ref", "$id", "$db"]);

/**
 * Eve's dbref serializer: `{"$col" or "$ref": …, "$id": …, "$db"?: …}` (nothing else) is a DBRef;
 * undefined for any other value.
 */
export function asDbRef(value: Doc): DBRef | undefined {
  const keys = Object.keys(value);
  const collection = "$col" in value ? value.$col : value.$ref;
  const id = value.$id;
  if (!keys.every((key) => DBREF_KEYS.has(key)) || ("$col" in value && "$ref" in value)) return undefined;
  if (typeof collection !== "string" || id === undefined || (value.$db !== undefined && typeof value.$db !== "string")) return undefined;
  return new DBRef(collection, (typeof id === "string" && isObjectIdHex(id) ? new ObjectId(id) : id) as ObjectId, value.$db as string | undefined);
}

const isDate = (value: unknown): value is Date => value instanceof Date && !Number.isNaN(value.getTime());

/** The built-in types for a given configuration (DATE_FORMAT, ALLOW_CUSTOM_FIELDS_IN_GEOJSON). */
export function builtinTypes(options: { dateFormat: string; allowCustomGeoFields: boolean }): Record<string, DataType> {
  const toDate = (value: unknown) => (typeof value === "string" ? parseDate(value, options.dateFormat) ?? value : value);
  const types: Record<string, DataType> = {
    string: { test: (v) => typeof v === "string", json: "string" },
    integer: { test: (v) => typeof v === "number" && Number.isInteger(v), convert: toInteger, json: "integer" },
    number: { test: (v) => typeof v === "number", convert: toNumber, json: "number" },
    float: { test: (v) => typeof v === "number", convert: toNumber, json: "number" },
    boolean: { test: (v) => typeof v === "boolean", convert: toBoolean, json: "boolean" },
    list: { test: Array.isArray, json: "array" },
    dict: { test: isPlainObject, json: "object" },
    datetime: { test: isDate, convert: toDate },
    date: { test: isDate, convert: toDate },
    objectid: {
      test: (v) => bsonType(v) === "ObjectId",
      convert: (v) => (typeof v === "string" && isObjectIdHex(v) ? new ObjectId(v) : v),
    },
    decimal128: { test: (v) => bsonType(v) === "Decimal128", convert: toDecimal },
    decimal: { test: (v) => bsonType(v) === "Decimal128", convert: toDecimal },
    dbref: { test: (v) => v instanceof DBRef || bsonType(v) === "DBRef" },
    binary: { test: (v) => v instanceof Uint8Array || bsonType(v) === "Binary" },
    set: { test: (v) => v instanceof Set },
    media: { test: (v) => typeof Blob !== "undefined" && v instanceof Blob },
    container: { test: (v) => Array.isArray(v) || v instanceof Set || isPlainObject(v) },
  };
  for (const name of Object.keys(GEO_TYPES) as GeoTypeName[]) {
    types[name] = { test: geoTest(name, options.allowCustomGeoFields) };
  }
  return types;
}

/** Type names known without a configuration (start-up checks, the JSON Schema export). */
export const BUILTIN_TYPE_NAMES = Object.keys(builtinTypes({ dateFormat: "%Y", allowCustomGeoFields: false }));
