// The text form of an ObjectId. Eve (bson's ObjectId.is_valid) accepts either case.

export const OBJECT_ID_PATTERN = "^[0-9a-fA-F]{24}$";

const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

/** 24 hex digits, upper or lower case. */
export function isObjectIdHex(text: string): boolean {
  return OBJECT_ID.test(text);
}

/** An ObjectId as bson 7 keeps it: its 12 bytes as four 24-bit numbers. */
export interface ObjectIdWords {
  i0: number;
  i1: number;
  i2: number;
  i3: number;
}

/**
 * The numbers of a bson 7 ObjectId, read directly: its `id` getter makes a new Buffer on every
 * read. Null for any other layout (another bson version), which callers read through its methods.
 */
export function objectIdWords(id: object): ObjectIdWords | null {
  const words = id as Partial<ObjectIdWords>;
  return typeof words.i0 === "number" && typeof words.i1 === "number" && typeof words.i2 === "number" && typeof words.i3 === "number" ? (words as ObjectIdWords) : null;
}

const HEX = Array.from("0123456789abcdef", (digit) => digit.charCodeAt(0));

/** The hex digit of a number's four bits from `shift`, as a character code. */
const digit = (n: number, shift: number): number => HEX[(n >>> shift) & 15]!;

/** The words of the last id written and its digits: a response writes one id several times (its ETag source, body and self link). */
const last = { i0: -1, i1: -1, i2: -1, i3: -1, hex: "" };

/**
 * An ObjectId's 24 lower-case hex digits, as toHexString() gives them. bson's builds them by
 * twelve concatenations, a rope of a dozen pieces that is flattened again wherever it is
 * written; one String.fromCharCode of the digits, spelled out so no array is made for them, is
 * one flat string, in 55-75% of the time on Node, Deno and Bun (bench/README.md). Bun's
 * fromCharCode of 24 arguments still costs some 50 ns, hence the last one kept.
 */
export function objectIdHex(id: { toHexString(): string }): string {
  const w = objectIdWords(id);
  if (!w) return id.toHexString();
  const { i0, i1, i2, i3 } = w;
  if (i0 === last.i0 && i1 === last.i1 && i2 === last.i2 && i3 === last.i3) return last.hex;
  last.hex = String.fromCharCode(
    digit(i0, 20), digit(i0, 16), digit(i0, 12), digit(i0, 8), digit(i0, 4), digit(i0, 0),
    digit(i1, 20), digit(i1, 16), digit(i1, 12), digit(i1, 8), digit(i1, 4), digit(i1, 0),
    digit(i2, 20), digit(i2, 16), digit(i2, 12), digit(i2, 8), digit(i2, 4), digit(i2, 0),
    digit(i3, 20), digit(i3, 16), digit(i3, 12), digit(i3, 8), digit(i3, 4), digit(i3, 0),
  );
  last.i0 = i0;
  last.i1 = i1;
  last.i2 = i2;
  last.i3 = i3;
  return last.hex;
}
