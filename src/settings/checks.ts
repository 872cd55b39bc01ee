// Value checks for the start-up settings validation (src/settings/validate.ts): each returns
// null when the value is fine, else what it must be, so that every problem can be listed at once.

export type Check = (value: unknown) => string | null;

export const show = (value: unknown) => {
  if (typeof value === "function") return "a function";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? text.slice(0, 57) + "..." : text;
};
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export const anything: Check = () => null;
export const bool: Check = (v) => (typeof v === "boolean" ? null : "must be true or false");
export const int = (min: number, max = Number.MAX_SAFE_INTEGER): Check => (v) =>
  Number.isInteger(v) && (v as number) >= min && (v as number) <= max
    ? null
    : max < Number.MAX_SAFE_INTEGER ? `must be an integer from ${min} to ${max}` : min === 0 ? "must be a non-negative integer" : `must be an integer of at least ${min}`;
export const text: Check = (v) => (typeof v === "string" ? null : "must be a string");
export const name: Check = (v) => (typeof v === "string" && v.trim() !== "" ? null : "must be a non-empty string");
export const object: Check = (v) => (isObject(v) ? null : "must be an object");
export const nullable = (check: Check): Check => (v) => (v === null ? null : check(v));
export const listOf = (check: Check, what: string): Check => (v) =>
  Array.isArray(v) && v.every((item) => check(item) === null) ? null : `must be a list of ${what}`;
export const strings = listOf(text, "strings");
export const oneOrMany = (check: Check, one: string, many: string): Check => (v) =>
  check(v) === null || listOf(check, many)(v) === null ? null : `must be ${one} or a list of ${many}`;
export const oneOf = (values: string[]): Check => (v) =>
  typeof v === "string" && values.includes(v) ? null : `must be one of ${values.join(", ")}`;
