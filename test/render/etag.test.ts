import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Decimal128, ObjectId } from "bson";
import { etagSource, portableSha1Hex, sha1Hex } from "../../src/render/etag.ts";

// ETags are SHA-1 of their source whichever implementation a runtime gets: the native one
// (process.getBuiltinModule) or the JavaScript one a Worker without nodejs_compat falls back to.
const reference = (text: string) => createHash("sha1").update(text).digest("hex");

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
      expect(portableSha1Hex(text)).toBe(reference(text));
      expect(sha1Hex(text)).toBe(reference(text));
    }
  });

  it("gives the standard test vector of \"abc\"", () => {
    expect(sha1Hex("abc")).toBe("a9993e364706816aba3e25717850c26c9cd0d89d");
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
});
