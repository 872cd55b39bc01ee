// Guards shared by the query-parameter parsers.

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
