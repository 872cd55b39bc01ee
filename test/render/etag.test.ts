import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Binary, Decimal128, ObjectId } from "bson";
import { etagSource, portableSha1Hex, sha1Hex } from "../../src/render/etag.ts";
import { dumps } from "../../src/render/pyjson.ts";

// ETags are SHA-1 of their source whichever implementation a runtime gets: the native one
// (process.getBuiltinModule) or the JavaScript one a Worker without nodejs_compat falls back to.
const reference = (text: string) => createHash("sha1").update(text).digest("hex");
const utf8 = (text: string) => new TextEncoder().encode(text);

function randomText(seed: number): string {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) & 0x7fffffff);
  const length = next() % 300;
  let text = "";
  for (let i = 0; i < length; i++) {
    const kind = next() % 10;
    // Mostly ASCII, some two-, three- and four-byte characters, now and then a lone surrogate.
    if (kind < 6) text += String.fromCharCode(32 + (next() % 95));
    else if (kind < 7) text += String.fromCharCode(0x80 + (next() % 0x700));
    else if (kind < 8) text += String.fromCharCode(0x800 + (next() % 0xd000));
    else if (kind < 9) text += String.fromCodePoint(0x10000 + (next() % 0xfffff));
    else text += String.fromCharCode(0xd800 + (next() % 0x800));
  }
  return text;
}

describe("SHA-1 of an ETag source", () => {
  it("agrees with node:crypto in both implementations, block boundaries and odd characters included", () => {
    const texts = ["", "a", "x".repeat(55), "x".repeat(56), "x".repeat(64), "é".repeat(40), "\ud800", "🦄"];
    for (let seed = 1; seed <= 500; seed++) texts.push(randomText(seed));
    for (const text of texts) {
      expect(portableSha1Hex(utf8(text))).toBe(reference(text));
      expect(sha1Hex(utf8(text))).toBe(reference(text));
    }
  });

  it("gives the standard test vector of \"abc\"", () => {
    expect(sha1Hex(utf8("abc"))).toBe("a9993e364706816aba3e25717850c26c9cd0d89d");
  });
});

describe("the ETag source", () => {
  it("writes every canonical leaf as bson.json_util.dumps(sort_keys=True) does", () => {
    const doc = {
      z: new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 678)),
      whole: new Date(Date.UTC(2020, 0, 2, 3, 4, 5)),
      early: new Date(-1000),
      id: new ObjectId("5f0c1e2d3a4b5c6d7e8f9012"),
      price: Decimal128.fromString("1.50"),
      bytes: new Uint8Array([97, 98]),
      list: [{ b: 1, a: "é" }],
    };
    expect(etagSource(doc)).toBe(
      '{"bytes": {"$binary": {"base64": "YWI=", "subType": "00"}}, "early": {"$date": {"$numberLong": "-1000"}}, ' +
        '"id": {"$oid": "5f0c1e2d3a4b5c6d7e8f9012"}, "list": [{"a": "\\u00e9", "b": 1}], "price": {"$numberDecimal": "1.50"}, ' +
        '"whole": {"$date": "2020-01-02T03:04:05Z"}, "z": {"$date": "2020-01-02T03:04:05.678Z"}}',
    );
  });

  it("writes BSON binary data with its subtype, as json_util writes pymongo's bytes and Binary", () => {
    expect(etagSource({ a: new Binary(new TextEncoder().encode("ab"), 0), b: new Binary(Uint8Array.from({ length: 16 }, (_, i) => i), 4), c: new Binary(new Uint8Array([1]), 0x80) })).toBe(
      '{"a": {"$binary": {"base64": "YWI=", "subType": "00"}}, "b": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}, ' +
        '"c": {"$binary": {"base64": "AQ==", "subType": "80"}}}',
    );
  });

  it("writes every date of years 1970-9999 as its ISO text, and the others as the number", () => {
    // Leap days, century and 400-year rules, the last millisecond of a day and of year 9999.
    const times = [0, 1, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, 1_709_164_800_005, 253_402_300_799_999, 253_402_300_800_000, -1];
    for (let t = 0; t < 253_402_300_800_000; t += 3_999_999_937) times.push(t);
    for (const time of times) {
      const date = new Date(time);
      const iso = date.toISOString();
      const expected = time < 0 || time >= 253_402_300_800_000 ? `{"$numberLong": "${time}"}` : `"${iso.endsWith(".000Z") ? iso.slice(0, -5) + "Z" : iso}"`;
      expect(etagSource({ d: date })).toBe(`{"d": {"$date": ${expected}}}`);
    }
    expect(() => etagSource({ d: new Date(NaN) })).toThrow(RangeError);
  });

  it("writes plain documents as the body serialiser's json.dumps does, sorted, whatever their characters and size", () => {
    let state = 7;
    // The high bits of the generator: its low ones repeat with a short period.
    const pick = (n: number) => Math.floor(((state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x80000000) * n);
    const scalar = (seed: number): unknown => {
      switch (pick(6)) {
        case 0: return randomText(seed);
        case 1: return pick(2000) - 1000;
        case 2: return pick(1000) / 7;
        case 3: return pick(2) === 0;
        case 4: return null;
        default: return String.fromCharCode(...Array.from({ length: 40 }, (_, i) => i)) + "\x7f\"\\";
      }
    };
    const node = (depth: number, seed: number): unknown => {
      if (depth > 3 || pick(3) === 0) return scalar(seed);
      const size = pick(6);
      if (pick(2) === 0) return Array.from({ length: size }, (_, i) => (i === 2 ? undefined : node(depth + 1, seed + i)));
      return Object.fromEntries(Array.from({ length: size }, (_, i) => [i === 1 ? randomText(seed + i) : `k${pick(50)}`, node(depth + 1, seed * 3 + i)]));
    };
    for (let seed = 1; seed <= 300; seed++) {
      const doc = node(0, seed);
      expect(etagSource(doc)).toBe(dumps(doc, { sortKeys: true }));
    }
    // Past the buffer it keeps between calls, and a small one after it.
    const large = { text: "é".repeat(20_000), list: Array.from({ length: 2000 }, (_, i) => ({ i })) };
    expect(etagSource(large)).toBe(dumps(large, { sortKeys: true }));
    expect(etagSource({ b: 1, a: [] })).toBe('{"a": [], "b": 1}');
  });
});
