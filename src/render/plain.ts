// Canonical values → JSON-ready ones: dates in DATE_FORMAT, ids as hex, decimals as strings,
// bytes as base64. Done once per response, before any renderer runs.
import { Binary, DBRef, Decimal128, Long, ObjectId } from "bson";
import { formatDate } from "./dates.ts";
import { objectIdHex } from "../util/objectid.ts";

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** A DBRef as Eve's encoder writes it: `$ref`, the id as a string, `$db` when it names one. */
function plainDbRef(ref: DBRef): Record<string, string> {
  const plain: Record<string, string> = { $ref: ref.collection, $id: ref.oid instanceof ObjectId ? objectIdHex(ref.oid) : String(ref.oid) };
  if (ref.db) plain.$db = ref.db;
  return plain;
}

/** toPlain's conversion of one canonical leaf (date, id, decimal, Int64, bytes, BSON binary, DBRef); any other value as is. */
export function plainLeaf(value: object, dateFormat: string): unknown {
  if (value instanceof Date) return formatDate(value, dateFormat);
  if (value instanceof ObjectId) return objectIdHex(value);
  if (value instanceof Decimal128) return value.toString();
  // An Int64 past 2^53, which the driver hands over as a Long: its digits, as Python writes an int.
  if (value instanceof Long) return BigInt(value.toString());
  if (value instanceof Uint8Array) return bytesToBase64(value);
  // BSON binary data as MongoDB hands it over (any subtype): its bytes, as bytes are served.
  if (value instanceof Binary) return bytesToBase64(value.value());
  if (value instanceof DBRef) return plainDbRef(value);
  return value;
}

export function toPlain(value: unknown, dateFormat: string): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => toPlain(v, dateFormat));
  const leaf = plainLeaf(value, dateFormat);
  if (leaf !== value) return leaf;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toPlain(v, dateFormat);
  return out;
}
