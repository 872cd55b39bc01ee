import { isPlainObject } from "../util/objects.ts";
// Python's str() and repr() for the values Cerberus interpolates into its messages, so that
// "unallowed values ['boss']" or "min value is 1.5" read exactly as Eve sends them.

function bsonType(value: unknown): string | undefined {
  return typeof value === "object" && value !== null ? (value as { _bsontype?: string })._bsontype : undefined;
}


/** `repr(float)`: shortest round-trip digits, exponent below 1e-4 with a two-digit exponent. */
function numberRepr(n: number): string {
  if (Number.isNaN(n)) return "nan";
  if (!Number.isFinite(n)) return n > 0 ? "inf" : "-inf";
  // JSON does not tell 1 from 1.0; an integral value is shown as Python shows an int.
  if (Number.isInteger(n)) return Object.is(n, -0) ? "-0.0" : BigInt(n).toString();
  if (Math.abs(n) >= 1e-4) return String(n);
  const [mantissa, exponent] = n.toExponential().split("e") as [string, string];
  const sign = exponent.startsWith("-") ? "-" : "+";
  return `${mantissa}e${sign}${exponent.replace(/^[+-]/, "").padStart(2, "0")}`;
}

// Characters Python's str.isprintable() rejects: other (C*) and separator (Z*) categories, bar space.
const NON_PRINTABLE = /[\p{C}\p{Z}]/u;

function stringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    if (char === quote || char === "\\") out += "\\" + char;
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (char !== " " && NON_PRINTABLE.test(char)) {
      const code = char.codePointAt(0)!;
      out += code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : code <= 0xffff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\U${code.toString(16).padStart(8, "0")}`;
    } else out += char;
  }
  return out + quote;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** `str(datetime)`: Eve's datetimes are naive UTC. */
function dateStr(date: Date): string {
  if (Number.isNaN(date.getTime())) return "Invalid Date";
  const micros = date.getUTCMilliseconds() * 1000;
  const base = `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  return micros ? `${base}.${pad(micros, 6)}` : base;
}

/** `repr(datetime)`: trailing zero seconds and microseconds are left out, as Python does. */
function dateRepr(date: Date): string {
  const parts = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes()];
  const seconds = date.getUTCSeconds();
  const micros = date.getUTCMilliseconds() * 1000;
  if (seconds || micros) parts.push(seconds);
  if (micros) parts.push(micros);
  return `datetime.datetime(${parts.join(", ")})`;
}

function bytesRepr(bytes: Uint8Array): string {
  let out = "b'";
  for (const byte of bytes) {
    if (byte === 0x27 || byte === 0x5c) out += "\\" + String.fromCharCode(byte);
    else if (byte === 0x0a) out += "\\n";
    else if (byte === 0x0d) out += "\\r";
    else if (byte === 0x09) out += "\\t";
    else if (byte < 0x20 || byte >= 0x7f) out += `\\x${byte.toString(16).padStart(2, "0")}`;
    else out += String.fromCharCode(byte);
  }
  return out + "'";
}

/** Python's `repr()` of a document value. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return numberRepr(value);
  if (typeof value === "bigint") return String(value);
  if (typeof value === "string") return stringRepr(value);
  if (typeof value === "function") return `<function ${value.name || "<lambda>"}>`;
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (value instanceof Date) return dateRepr(value);
  if (value instanceof Set) return value.size ? `{${[...value].map(pyRepr).join(", ")}}` : "set()";
  if (value instanceof Uint8Array) return bytesRepr(value);
  switch (bsonType(value)) {
    case "ObjectId":
      return `ObjectId('${String(value)}')`;
    case "Decimal128":
      return `Decimal128('${String(value)}')`;
    case "DBRef": {
      const ref = value as { collection: string; oid: unknown };
      return `DBRef(${stringRepr(ref.collection)}, ${pyRepr(ref.oid)})`;
    }
    case "Binary":
      return bytesRepr((value as { buffer: Uint8Array }).buffer);
  }
  if (typeof Blob !== "undefined" && value instanceof Blob) {
    const name = (value as { name?: string }).name;
    return `<FileStorage: ${stringRepr(name ?? "")} (${stringRepr(value.type)})>`;
  }
  if (isPlainObject(value)) {
    return `{${Object.entries(value).map(([k, v]) => `${stringRepr(k)}: ${pyRepr(v)}`).join(", ")}}`;
  }
  return String(value);
}

/** Python's `str()`: strings bare, datetimes as `2020-01-01 00:00:00`, ids as hex, else repr. */
export function pyStr(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Date) return dateStr(value);
  const type = bsonType(value);
  if (type === "ObjectId" || type === "Decimal128") return String(value);
  return pyRepr(value);
}
