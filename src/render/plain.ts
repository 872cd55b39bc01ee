// Canonical values → JSON-ready ones: dates in DATE_FORMAT, ids as hex, decimals as strings,
// bytes as base64. Done once per response, before any renderer runs.
import { Decimal128, ObjectId } from "bson";
import { formatDate } from "./dates.ts";

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** toPlain's conversion of one canonical leaf (date, id, decimal, bytes); any other value as is. */
export function plainLeaf(value: object, dateFormat: string): unknown {
  if (value instanceof Date) return formatDate(value, dateFormat);
  if (value instanceof ObjectId) return value.toHexString();
  if (value instanceof Decimal128) return value.toString();
  if (value instanceof Uint8Array) return bytesToBase64(value);
  return value;
}

export function toPlain(value: unknown, dateFormat: string): unknown {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Date) return formatDate(value, dateFormat);
  if (value instanceof ObjectId) return value.toHexString();
  if (value instanceof Decimal128) return value.toString();
  if (value instanceof Uint8Array) return bytesToBase64(value);
  if (Array.isArray(value)) return value.map((v) => toPlain(v, dateFormat));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toPlain(v, dateFormat);
  return out;
}
