// What counts as a plain object, and which keys are refused, everywhere a value is walked:
// query parsers, validation, drivers, the gateway.

const PROTOTYPE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/**
 * A key, or a segment of a dotted key, that could reach an object's prototype downstream, or
 * one with a NUL byte, which no BSON document can hold (MongoDB refuses it where the other
 * stores would keep it): refused alike on every store.
 */
export function isRefusedKey(key: string): boolean {
  if (key.includes("\0")) return true;
  // Most keys have no dot: one lookup instead of an array of parts.
  return key.includes(".") ? key.split(".").some((part) => PROTOTYPE_KEYS.has(part)) : PROTOTYPE_KEYS.has(key);
}

/**
 * A shallow copy without one key. A loop, not `const { [key]: _, ...rest }`: V8 compiles that
 * rest with a computed key to a slow generic copy (~10× this loop on a 10-field document).
 */
export function withoutKey(object: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const name of Object.keys(object)) {
    if (name === key) continue;
    // A field named __proto__ stays a field (an assignment would set the prototype).
    if (name === "__proto__") Object.defineProperty(copy, name, { value: object[name], enumerable: true, writable: true, configurable: true });
    else copy[name] = object[name];
  }
  return copy;
}

/**
 * An object literal — what JSON.parse, the Python-style parser and form readers build (null
 * prototype included) — as opposed to arrays, dates, ObjectIds and other bson values.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
