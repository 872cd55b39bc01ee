// The shared definitions that replaced copies which disagreed with each other.
import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { internalErrorResponse } from "../../src/errors.ts";
import { isObjectIdHex } from "../../src/util/objectid.ts";
import { isPlainObject } from "../../src/util/objects.ts";

describe("isObjectIdHex", () => {
  // One copy (media ids) accepted lower case only; Eve's ObjectId.is_valid takes either case.
  it("accepts 24 hex digits in either case", () => {
    expect(isObjectIdHex("5f0c6b5e8c1a2b3c4d5e6f70")).toBe(true);
    expect(isObjectIdHex("5F0C6B5E8C1A2B3C4D5E6F70")).toBe(true);
  });

  it("refuses other lengths and non-hex text", () => {
    expect(isObjectIdHex("5f0c6b5e8c1a2b3c4d5e6f7")).toBe(false);
    expect(isObjectIdHex("5f0c6b5e8c1a2b3c4d5e6f700")).toBe(false);
    expect(isObjectIdHex("5f0c6b5e8c1a2b3c4d5e6f7g")).toBe(false);
    expect(isObjectIdHex("")).toBe(false);
  });
});

describe("isPlainObject", () => {
  // Two copies (PATCH's nested merge, GeoJSON checks) refused objects without a prototype,
  // which the Python-style query parser builds.
  it("accepts object literals, with or without a prototype", () => {
    expect(isPlainObject({ a: 1 })).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
  });

  it("refuses arrays, dates, bson values and primitives", () => {
    for (const value of [[], new Date(0), new ObjectId(), null, undefined, "x", 1]) expect(isPlainObject(value)).toBe(false);
  });
});

describe("internalErrorResponse", () => {
  // The handler's copy serialised without Python's spaces; the adapters' with them.
  it("is Eve's 500, as Eve serialises it", async () => {
    const response = internalErrorResponse();
    expect(response.status).toBe(500);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.text()).toBe('{"_status": "ERR", "_error": {"code": 500, "message": "Internal Server Error"}}');
  });
});
