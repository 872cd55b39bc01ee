// How documents are kept in SQLite: JSON text in which everest's canonical values that JSON has
// no type for are one-key objects, chosen so that SQL can compare them: ObjectId as
// {"$oid": hex} (hex order is byte order), Date as {"$date": milliseconds} (a number, so ranges
// compare numerically). Every other bson value (Decimal128, Long, Binary, regular expressions,
// non-finite doubles) is its canonical Extended JSON object, read back by bson's EJSON.
import { DBRef, EJSON, ObjectId } from "bson";
import type { Doc } from "../types.ts";

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A value as the JSON-ready form stored in a row; `undefined` becomes null, as the other drivers store it. */
export function encodeValue(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : EJSON.serialize(value, { relaxed: false });
    case "object":
      break;
    default:
      return EJSON.serialize(value, { relaxed: false });
  }
  if (Array.isArray(value)) return value.map(encodeValue);
  if (value instanceof ObjectId) return { $oid: value.toHexString() };
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? EJSON.serialize(value, { relaxed: false }) : { $date: value.getTime() };
  if (!isPlainObject(value)) return EJSON.serialize(value, { relaxed: false });
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    // A plain assignment of "__proto__" would set the prototype instead of storing a field.
    Object.defineProperty(out, key, { value: encodeValue(value[key]), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The JSON text of a document, `_id` first. */
export function encodeDocument(doc: Doc): string {
  const ordered: Doc = { _id: doc._id };
  for (const key of Object.keys(doc)) {
    if (key !== "_id") Object.defineProperty(ordered, key, { value: doc[key], enumerable: true, writable: true, configurable: true });
  }
  return JSON.stringify(encodeValue(ordered));
}

/** The primary key of an `_id`: its stored JSON text, so every BSON type stays distinct (1 and "1" differ). */
export function idKey(id: unknown): string {
  return JSON.stringify(encodeValue(id));
}

/** The stored JSON text of a scalar, as SQLite's json_each and `->>` render an object value. */
export function encodedText(value: unknown): string {
  return JSON.stringify(encodeValue(value));
}

function revive(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys[0]!.startsWith("$")) return value;
  const object = value as Record<string, unknown>;
  if (keys.length === 1 && typeof object.$oid === "string") return new ObjectId(object.$oid);
  if (keys.length === 1 && typeof object.$date === "number") return new Date(object.$date);
  if (keys.length === 1 && typeof object.$numberDouble === "string") return Number(object.$numberDouble);
  // A DBRef's id was revived already (the reviver works inside out), which EJSON would not expect.
  if (typeof object.$ref === "string" && "$id" in object) return new DBRef(object.$ref, object.$id as ObjectId, object.$db as string | undefined);
  try {
    return EJSON.deserialize(object, { relaxed: false });
  } catch {
    return value;
  }
}

export function decodeDocument(text: string): Doc {
  return JSON.parse(text, revive) as Doc;
}
