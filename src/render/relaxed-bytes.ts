// What Eve hashes for an ETag, `bson.json_util.dumps(value, sort_keys=True)` (relaxed Extended
// JSON through Python's json.dumps), written straight into bytes. json.dumps escapes everything
// outside printable ASCII, so the text is ASCII and each character is one byte: nothing to encode
// before hashing, and no string built from hundreds of pieces that the hash must first flatten
// (on Bun that flattening cost more than the hash; bench/README.md, "eighth round"). Bodies are
// still written as text by src/render/pyjson.ts: one byte writer for both, with a leaf hook and
// indentation, made the handler slower on every runtime (same section), so json.dumps' rules
// live in both, held to each other and to Eve's recorded output by test/render/.
import { Binary, ObjectId, Decimal128, Long } from "bson";
import { bytesToBase64 } from "./plain.ts";
import { pyNumber, sortedKeys } from "./pyjson.ts";
import { objectIdHex } from "../util/objectid.ts";

/** The first instant of year 10000: bson writes years 1970-9999 as ISO text, others as the number. */
const YEAR_10000 = 253_402_300_800_000;

/** Lower-case hex digits by value, as character codes, for json.dumps' \uXXXX escapes. */
const HEX = Uint8Array.from("0123456789abcdef", (digit) => digit.charCodeAt(0));

/** json.dumps' two-character escapes by character code (0 where it writes \u00XX instead). */
const SHORT_ESCAPE = new Uint8Array(0x5d);
for (const [char, letter] of Object.entries({ '"': '"', "\\": "\\", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t" })) {
  SHORT_ESCAPE[char.charCodeAt(0)] = letter.charCodeAt(0);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** A buffer grown past this for one large document is dropped at the next call, not kept for good. */
const KEPT_BYTES = 64 * 1024;

/**
 * ASCII written into a growing buffer. An object's fields, not module variables: V8 checks a
 * module-level `let` for its temporal dead zone on every read, and these are read per byte.
 */
class AsciiWriter {
  bytes = new Uint8Array(1024);
  at = 0;

  /** The buffer, with room for `count` more bytes. */
  room(count: number): Uint8Array {
    if (this.at + count > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.at + count));
      grown.set(this.bytes.subarray(0, this.at));
      this.bytes = grown;
    }
    return this.bytes;
  }

  /** Text known to be ASCII (numbers, dates, digits, literals). */
  ascii(text: string): void {
    const length = text.length;
    const bytes = this.room(length);
    let p = this.at;
    for (let i = 0; i < length; i++) bytes[p++] = text.charCodeAt(i);
    this.at = p;
  }

  /** One byte: a bracket or a brace. */
  byte(code: number): void {
    this.room(1)[this.at++] = code;
  }

  /** Two bytes: the separators `, ` and `: `. */
  pair(first: number, second: number): void {
    const bytes = this.room(2);
    bytes[this.at] = first;
    bytes[this.at + 1] = second;
    this.at += 2;
  }

  /** A string as json.dumps(ensure_ascii=True) writes it: UTF-16 code units outside ASCII as \uXXXX. */
  quoted(text: string): void {
    const length = text.length;
    const bytes = this.room(length * 6 + 2);
    let p = this.at;
    bytes[p++] = QUOTE;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x20 && code < 0x7f && code !== QUOTE && code !== BACKSLASH) {
        bytes[p++] = code;
        continue;
      }
      bytes[p++] = BACKSLASH;
      const letter = code < 0x5d ? SHORT_ESCAPE[code]! : 0;
      if (letter !== 0) {
        bytes[p++] = letter;
        continue;
      }
      bytes[p++] = 0x75; // u
      bytes[p++] = HEX[code >>> 12]!;
      bytes[p++] = HEX[(code >>> 8) & 15]!;
      bytes[p++] = HEX[(code >>> 4) & 15]!;
      bytes[p++] = HEX[code & 15]!;
    }
    bytes[p++] = QUOTE;
    this.at = p;
  }

  /** `n` as `width` decimal digits, zero-padded (0 <= n < 10^width), then the byte `after`. */
  digits(n: number, width: number, after: number): void {
    const bytes = this.room(width + 1);
    for (let i = this.at + width - 1; i >= this.at; i--) {
      const next = (n / 10) | 0;
      bytes[i] = 0x30 + n - next * 10;
      n = next;
    }
    bytes[(this.at += width + 1) - 1] = after;
  }

  /**
   * A date as bson's relaxed Extended JSON writes it: `{"$date": "YYYY-MM-DDTHH:MM:SS[.mmm]Z"}`
   * for years 1970-9999, the number of milliseconds otherwise; digits written from the Date's
   * UTC fields. A POST's document holds three dates, and toISOString with a cache of its text
   * was a third of the writer's time (bench/README.md, issue 36).
   */
  date(date: Date): void {
    const time = date.getTime();
    if (!(time >= 0 && time < YEAR_10000)) {
      // An invalid Date fails as toISOString fails for it.
      if (Number.isNaN(time)) throw new RangeError("Invalid time value");
      return this.ascii(`{"$date": {"$numberLong": "${time}"}}`);
    }
    const millis = time % 1000;
    this.ascii('{"$date": "');
    this.digits(date.getUTCFullYear(), 4, 0x2d); // -
    this.digits(date.getUTCMonth() + 1, 2, 0x2d);
    this.digits(date.getUTCDate(), 2, 0x54); // T
    this.digits(date.getUTCHours(), 2, 0x3a); // :
    this.digits(date.getUTCMinutes(), 2, 0x3a);
    // bson leaves out whole seconds' milliseconds.
    this.digits(date.getUTCSeconds(), 2, millis ? 0x2e : 0x5a); // . or Z
    if (millis) this.digits(millis, 3, 0x5a);
    this.ascii('"}');
  }

  /** bson's `json_util._json_convert` of a canonical leaf; false for any other object. */
  leaf(value: object): boolean {
    if (value instanceof Date) this.date(value);
    // The digits through objectIdHex, which keeps the last id's: the body and the self link
    // written after the ETag then find them made.
    else if (value instanceof ObjectId) this.ascii(`{"$oid": "${objectIdHex(value)}"}`);
    else if (value instanceof Decimal128) this.ascii(`{"$numberDecimal": "${value.toString()}"}`);
    // Relaxed Extended JSON writes an Int64 as a plain number, every digit kept.
    else if (value instanceof Long) this.ascii(value.toString());
    else if (value instanceof Uint8Array) this.ascii(`{"$binary": {"base64": "${bytesToBase64(value)}", "subType": "00"}}`);
    // pymongo hands Eve subtype 0 as bytes and any other as a Binary; both keep their subtype here.
    else if (value instanceof Binary) this.ascii(`{"$binary": {"base64": "${bytesToBase64(value.value())}", "subType": "${value.sub_type.toString(16).padStart(2, "0")}"}}`);
    else return false;
    return true;
  }

  write(node: unknown): void {
    switch (typeof node) {
      case "string":
        return this.quoted(node);
      case "number":
        return this.ascii(pyNumber(node));
      case "boolean":
        return this.ascii(node ? "true" : "false");
      case "bigint":
        return this.ascii(node.toString());
      case "undefined":
        return this.ascii("null");
    }
    if (node === null) return this.ascii("null");
    if (Array.isArray(node)) {
      this.byte(0x5b); // [
      for (let i = 0; i < node.length; i++) {
        if (i > 0) this.pair(0x2c, 0x20);
        this.write(node[i]);
      }
      this.byte(0x5d); // ]
      return;
    }
    if (Object.getPrototypeOf(node) !== Object.prototype && this.leaf(node as object)) return;
    // Any other object is written as its own enumerable properties, as json.dumps writes a dict.
    const object = node as Record<string, unknown>;
    const keys = sortedKeys(object);
    this.byte(0x7b); // {
    let first = true;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const value = object[key];
      if (value === undefined) continue;
      if (!first) this.pair(0x2c, 0x20);
      this.quoted(key);
      this.pair(0x3a, 0x20);
      this.write(value);
      first = false;
    }
    this.byte(0x7d); // }
  }
}

/** One writer for every call: its bytes are hashed or decoded before the next call, and no call awaits. */
const writer = new AsciiWriter();

/**
 * `bson.json_util.dumps(value, sort_keys=True)` as ASCII bytes: a view of a shared buffer, valid
 * until the next call, so it must be used (hashed, decoded) at once.
 */
export function relaxedJsonBytes(value: unknown): Uint8Array {
  if (writer.bytes.length > KEPT_BYTES) writer.bytes = new Uint8Array(1024);
  writer.at = 0;
  writer.write(value);
  return writer.bytes.subarray(0, writer.at);
}
