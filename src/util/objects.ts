// What counts as a plain object, and which keys are refused, everywhere a value is walked:
// query parsers, validation, drivers, the gateway.

const PROTOTYPE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** A key, or a segment of a dotted key, that could reach an object's prototype downstream. */
export function isPrototypeKey(key: string): boolean {
  return key.split(".").some((part) => PROTOTYPE_KEYS.has(part));
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
