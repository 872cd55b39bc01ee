import { Binary, Decimal128, ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { toJson } from "../../src/render/json.ts";
import { loadExchanges } from "../support/exchanges.ts";

describe("toJson", () => {
  it("writes Python's separators and Eve's canonical values (exchange 2)", () => {
    const payload = {
      _updated: new Date(Date.UTC(2026, 10, 21, 11, 23, 48)),
      _created: new Date(Date.UTC(2026, 10, 21, 11, 23, 48)),
      _etag: "3b6791d87f8d734509dfdaba03c3fc03c3a57dc3",
      _id: new ObjectId("6b017f44150443131587b088"),
      _links: { self: { title: "person", href: "people/6b017f44150443131587b088" } },
      _status: "OK",
    };
    expect(toJson(payload)).toBe(loadExchanges().find((e) => e.number === 2)!.response.body);
  });

  it("writes keys named like Object.prototype's members as keys, the second time too", () => {
    const value = JSON.parse('{"__proto__": {"a": 1}, "constructor": 2, "toString": "x", "hasOwnProperty": null}') as unknown;
    const text = '{"__proto__": {"a": 1}, "constructor": 2, "toString": "x", "hasOwnProperty": null}';
    expect(toJson(value)).toBe(text);
    expect(toJson(value)).toBe(text);
  });

  it("sorts keys (JSON_SORT_KEYS) right for many key lists that share a first key, in any order", () => {
    // More lists per first key than are kept, visited forwards, backwards and again, so lists
    // already seen, lists pushed out and new ones all come up.
    const lists = Array.from({ length: 12 }, (_, n) => ["_id", ...Array.from({ length: n % 5 }, (_, i) => `f${(n * 7 + i * 3) % 11}`), `z${n}`, "a"]);
    const written = (keys: string[]) => `{${[...new Set(keys)].sort().map((key) => `"${key}": ${keys.indexOf(key)}`).join(", ")}}`;
    for (const keys of [...lists, ...lists.slice().reverse(), ...lists]) {
      const object = Object.fromEntries(keys.map((key, i) => [key, keys.indexOf(key) === i ? i : keys.indexOf(key)]));
      expect(toJson(object, false, undefined, true)).toBe(written(keys));
    }
    // A long key list (data, not shape) is sorted too.
    const long = Array.from({ length: 40 }, (_, i) => `k${(i * 17) % 40}`);
    expect(toJson(Object.fromEntries(long.map((key) => [key, long.indexOf(key)])), false, undefined, true)).toBe(written(long));
  });

  it("escapes non-ASCII as \\uXXXX (ensure_ascii)", () => {
    expect(toJson({ name: "Zoë 😀\u007f" })).toBe('{"name": "Zo\\u00eb \\ud83d\\ude00\\u007f"}');
  });

  it("pretty-prints as json.dumps(indent=4)", () => {
    expect(toJson({ a: [1, { b: null }], c: {}, d: [] }, true)).toBe(
      '{\n    "a": [\n        1,\n        {\n            "b": null\n        }\n    ],\n    "c": {},\n    "d": []\n}',
    );
  });

  it("writes dates of any year in the default format as strftime would (toUTCString only for four-digit years)", () => {
    const at = (year: number) => {
      const date = new Date(Date.UTC(2000, 5, 7, 8, 9, 10));
      date.setUTCFullYear(year);
      return date;
    };
    expect(toJson({ a: at(999), b: at(12345), c: at(1000), d: at(9999) })).toBe(
      '{"a": "Fri, 07 Jun 999 08:09:10 GMT", "b": "Thu, 07 Jun 12345 08:09:10 GMT", "c": "Sat, 07 Jun 1000 08:09:10 GMT", "d": "Mon, 07 Jun 9999 08:09:10 GMT"}',
    );
  });

  it("writes BSON binary data another program stored (any subtype) as its bytes in base64, as it writes bytes", () => {
    const uuid = new Binary(Uint8Array.from({ length: 16 }, (_, i) => i), 4);
    expect(toJson({ raw: new Binary(new TextEncoder().encode("hello"), 0), uuid, bytes: new Uint8Array([104, 105]) })).toBe(
      '{"raw": "aGVsbG8=", "uuid": "AAECAwQFBgcICQoLDA0ODw==", "bytes": "aGk="}',
    );
  });

  it("honours DATE_FORMAT and writes decimals as strings", () => {
    expect(toJson({ at: new Date(Date.UTC(2020, 0, 2)), price: Decimal128.fromString("9.90") }, false, "%Y-%m-%d")).toBe(
      '{"at": "2020-01-02", "price": "9.90"}',
    );
  });
});
