// The journal's lines read back by parseCanonical (src/drivers/memory/canonical-ejson.ts) exactly
// as bson's EJSON.parse reads them: every BSON type a document can hold, written as the journal
// writes it (canonical Extended JSON), then read both ways.
import { Binary, BSONRegExp, Code, DBRef, Decimal128, Double, EJSON, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp, UUID } from "bson";
import { describe, expect, it } from "vitest";
import { parseCanonical } from "../../src/drivers/memory/canonical-ejson.ts";
import { random } from "./support/random-documents.ts";

const rand = random(20261129);
const pick = <T>(values: T[]): T => values[Math.floor(rand() * values.length)]!;

const scalars = (): unknown[] => [
  new ObjectId(), new Date(0), new Date(-62135596800000), new Date(8.64e15), new Date(Date.UTC(2026, 10, 29, 12, 0, 0, 123)),
  0, -0, 1, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1.5, NaN, Infinity, -Infinity, new Int32(7), new Double(2), new Double(-0),
  Long.fromNumber(42), Long.fromString("9223372036854775807"), Decimal128.fromString("1.10"), Decimal128.fromString("-1E+999"),
  new Binary(new Uint8Array([1, 2, 3]), 0), new UUID(), new BSONRegExp("^a", "i"), /b$/m, new Timestamp({ t: 5, i: 1 }),
  new MinKey(), new MaxKey(), new Code("x"), new DBRef("people", new ObjectId()),
  "", "$oid", "text with \u0000 and é", null, true, false,
  { $date: "2026-11-29T00:00:00Z" }, { $numberLong: "12" }, { nested: { $numberInt: "3" } }, { $foo: 1, bar: 2 },
];

function value(depth: number): unknown {
  const r = rand();
  if (depth < 3 && r < 0.15) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
  if (depth < 3 && r < 0.3) return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, (_, i) => [`k${i}`, value(depth + 1)]));
  return pick(scalars());
}

describe("the journal's lines read back", () => {
  it("give what bson's EJSON.parse gives, for every type a document can hold", () => {
    for (let i = 0; i < 500; i++) {
      const record = { op: "insert", db: "everest", coll: "c", docs: [Object.fromEntries(Array.from({ length: 6 }, (_, k) => [`f${k}`, value(0)]))] };
      const line = EJSON.stringify(record, { relaxed: false });
      const expected = EJSON.parse(line, { relaxed: true });
      const actual = parseCanonical(line);
      expect(actual, line).toStrictEqual(expected);
      // toStrictEqual takes -0 and 0 as different, NaN as NaN; the classes must match too.
      expect(EJSON.stringify(actual as object, { relaxed: false }), line).toBe(EJSON.stringify(expected, { relaxed: false }));
    }
  });

  it("refuses a field name holding a NUL character, as bson does", () => {
    const line = '{"op":"insert","docs":[{"a\\u0000b":1}]}';
    expect(() => EJSON.parse(line, { relaxed: true })).toThrow(/null bytes/);
    expect(() => parseCanonical(line)).toThrow(/null bytes/);
  });
});
