// Python's json.dumps, which produces every body Eve sends and every ETag it hashes: ", " and
// ": " separators, non-ASCII escaped (ensure_ascii), `indent` for pretty output. Matching it keeps
// Content-Length and ETags identical to Eve's for the same document.

function pyString(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

function pyNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
  return String(value);
}

export interface DumpOptions {
  sortKeys?: boolean;
  indent?: number;
}

/** Serialises plain JSON values (strings, numbers, booleans, null, arrays, objects). */
export function dumps(value: unknown, options: DumpOptions = {}): string {
  const { sortKeys = false, indent } = options;
  const walk = (node: unknown, depth: number): string => {
    if (node === null || node === undefined) return "null";
    switch (typeof node) {
      case "string":
        return pyString(node);
      case "number":
        return pyNumber(node);
      case "boolean":
        return node ? "true" : "false";
      case "bigint":
        return node.toString();
    }
    const pad = indent === undefined ? "" : "\n" + " ".repeat(indent * (depth + 1));
    const close = indent === undefined ? "" : "\n" + " ".repeat(indent * depth);
    const sep = indent === undefined ? ", " : ",";
    if (Array.isArray(node)) {
      if (node.length === 0) return "[]";
      return "[" + pad + node.map((v) => walk(v, depth + 1)).join(sep + pad) + close + "]";
    }
    let entries = Object.entries(node as Record<string, unknown>).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return "{}";
    if (sortKeys) entries = entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return "{" + pad + entries.map(([k, v]) => pyString(k) + ": " + walk(v, depth + 1)).join(sep + pad) + close + "}";
  };
  return walk(value, 0);
}
