// Types and the conversion of incoming values to them (docs/decisions.md §3).
import { Decimal128, ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { ENGINES, single } from "./support.ts";

const HEX = "5f0000000000000000000001";

describe.each(ENGINES)("types and conversion (%s engine)", (engine) => {
  async function converted(type: unknown, value: unknown, settings = {}) {
    const t = single({ f: { type } as never }, engine, { settings });
    return t.check({ f: value });
  }

  it("converts numeric strings for integer, number and float", async () => {
    expect((await converted("integer", "12")).document.f).toBe(12);
    expect((await converted("integer", " -7 ")).document.f).toBe(-7);
    expect((await converted("number", "1.5")).document.f).toBe(1.5);
    expect((await converted("number", "1e3")).document.f).toBe(1000);
    expect((await converted("float", "2")).document.f).toBe(2);
  });

  it("never truncates: a non-integral value is a type error for integer", async () => {
    for (const value of [1.5, "1.5", "abc", true, "12345678901234567890"]) {
      const result = await converted("integer", value);
      expect(result.issues).toEqual({ f: "must be of integer type" });
      expect(result.document.f).toBe(value);
    }
  });

  it("does not take booleans for numbers", async () => {
    expect((await converted("number", false)).issues).toEqual({ f: "must be of number type" });
    expect((await converted("float", true)).issues).toEqual({ f: "must be of float type" });
  });

  it("converts booleans from true/false/1/0", async () => {
    for (const [value, expected] of [["true", true], ["False", false], ["1", true], ["0", false], [1, true], [0, false], [true, true]] as const) {
      const result = await converted("boolean", value);
      expect(result.valid).toBe(true);
      expect(result.document.f).toBe(expected);
    }
    expect((await converted("boolean", "yes")).issues).toEqual({ f: "must be of boolean type" });
    expect((await converted("boolean", 2)).issues).toEqual({ f: "must be of boolean type" });
  });

  it("parses datetimes in DATE_FORMAT, and leaves what does not parse to the type rule", async () => {
    const result = await converted("datetime", "Thu, 27 Aug 1970 14:37:13 GMT");
    expect(result.document.f).toEqual(new Date(Date.UTC(1970, 7, 27, 14, 37, 13)));
    expect((await converted("datetime", "yesterday")).issues).toEqual({ f: "must be of datetime type" });
    expect((await converted("datetime", "Sat, 31 Feb 2020 10:00:00 GMT")).issues).toEqual({ f: "must be of datetime type" });
    expect((await converted("datetime", 12)).issues).toEqual({ f: "must be of datetime type" });
    const custom = await converted("datetime", "2024-03-01", { DATE_FORMAT: "%Y-%m-%d" });
    expect(custom.document.f).toEqual(new Date(Date.UTC(2024, 2, 1)));
    expect((await converted("date", "Mon, 01 Jan 2024 00:00:00 GMT")).valid).toBe(true);
  });

  it("converts 24-hex strings to ObjectId, nothing else", async () => {
    const result = await converted("objectid", HEX);
    expect(result.document.f).toBeInstanceOf(ObjectId);
    expect(String(result.document.f)).toBe(HEX);
    expect((await converted("objectid", HEX.toUpperCase())).valid).toBe(true);
    for (const value of ["xyz", "123456789012", 12]) expect((await converted("objectid", value)).issues).toEqual({ f: "must be of objectid type" });
  });

  it("stores decimals as Decimal128 without losing precision", async () => {
    const result = await converted("decimal128", "1.10");
    expect(result.document.f).toBeInstanceOf(Decimal128);
    expect(String(result.document.f)).toBe("1.10");
    expect(String((await converted("decimal", 0.1)).document.f)).toBe("0.1");
    expect(String((await converted("decimal128", "12345678901234567890.123456789")).document.f)).toBe("12345678901234567890.123456789");
    expect((await converted("decimal128", "abc")).issues).toEqual({ f: "must be of decimal128 type" });
  });

  it("checks the other types as they are", async () => {
    expect((await converted("media", new Blob(["x"]))).valid).toBe(true);
    expect((await converted("media", "x")).issues).toEqual({ f: "must be of media type" });
    expect((await converted("binary", new Uint8Array([1]))).valid).toBe(true);
    expect((await converted("set", new Set([1]))).valid).toBe(true);
    expect((await converted("set", [1])).issues).toEqual({ f: "must be of set type" });
    expect((await converted("dict", [])).issues).toEqual({ f: "must be of dict type" });
    expect((await converted("list", {})).issues).toEqual({ f: "must be of list type" });
    expect((await converted("string", 1)).issues).toEqual({ f: "must be of string type" });
  });

  it("with a list of types, converts with the first type that converts the value", async () => {
    expect((await converted(["objectid", "string"], HEX)).document.f).toBeInstanceOf(ObjectId);
    expect((await converted(["objectid", "string"], "plain")).document.f).toBe("plain");
    expect((await converted(["string", "integer"], "12")).document.f).toBe(12);
    expect((await converted(["boolean", "integer"], "12")).document.f).toBe(12);
    expect((await converted(["integer", "string"], 5)).document.f).toBe(5);
    // A value already of a type listed ahead needs no conversion: 1 stayed a number no longer.
    expect((await converted(["number", "string", "boolean"], 1)).document.f).toBe(1);
    expect((await converted(["number", "string", "boolean"], 0)).document.f).toBe(0);
    expect((await converted(["number", "string", "boolean"], "10")).document.f).toBe(10);
    expect((await converted(["integer", "boolean"], 1)).document.f).toBe(1);
    expect((await converted(["boolean", "integer"], 1)).document.f).toBe(true);
  });

  it("converts inside sub-documents, lists, positional items and mapping values", async () => {
    const t = single(
      {
        owner: { type: "dict", schema: { id: { type: "objectid" }, since: { type: "datetime" } } },
        ids: { type: "list", schema: { type: "objectid" } },
        pair: { type: "list", items: [{ type: "integer" }, { type: "boolean" }] },
        counts: { type: "dict", valuesrules: { type: "objectid" } },
        either: { anyof: [{ type: "objectid" }, { type: "string" }] },
      },
      engine,
    );
    const result = await t.check({
      owner: { id: HEX, since: "Mon, 01 Jan 2024 00:00:00 GMT" },
      ids: [HEX],
      pair: ["3", "true"],
      counts: { a: HEX },
      either: HEX,
    });
    expect(result.issues).toEqual({});
    expect(result.document).toEqual({
      owner: { id: new ObjectId(HEX), since: new Date(Date.UTC(2024, 0, 1)) },
      ids: [new ObjectId(HEX)],
      pair: [3, true],
      counts: { a: new ObjectId(HEX) },
      either: new ObjectId(HEX),
    });
  });

  it("leaves mapping values of other types as sent, as Eve's serialize does", async () => {
    const t = single({ counts: { type: "dict", valuesrules: { type: "integer" } } }, engine);
    const result = await t.check({ counts: { a: "4" } });
    expect(result.issues).toEqual({ counts: { a: "must be of integer type" } });
  });

  it("turns single values into lists with AUTO_CREATE_LISTS", async () => {
    const result = await converted("list", "a", { AUTO_CREATE_LISTS: true });
    expect(result.document.f).toEqual(["a"]);
    expect((await converted("list", "a")).issues).toEqual({ f: "must be of list type" });
  });

  it("converts datetime bounds and defaults given as strings in settings", async () => {
    const t = single({ f: { type: "datetime", min: "Mon, 01 Jan 2024 00:00:00 GMT" }, g: { type: "datetime", default: "Tue, 02 Jan 2024 00:00:00 GMT" } }, engine);
    expect(await t.issues({ f: "Sun, 31 Dec 2023 00:00:00 GMT" })).toEqual({ f: "min value is 2024-01-01 00:00:00" });
    expect((await t.check({})).document.g).toEqual(new Date(Date.UTC(2024, 0, 2)));
  });

  describe("GeoJSON", () => {
    const point = { type: "Point", coordinates: [100, 10] };
    const ring = [[0, 0], [1, 0], [1, 1], [0, 0]];
    const CASES: Array<[string, unknown[], unknown[]]> = [
      ["point", [point, { type: "Point", coordinates: [100, 10, 250] }], [{ type: "Point", coordinates: [1, 2, 3, 4] }, { type: "Point", coordinates: [1] }, { type: "Point", coordinates: ["1", 2] }, { type: "Pont", coordinates: [1, 2] }, { coordinates: [1, 2] }, { ...point, extra: 1 }, [1, 2]]],
      ["multipoint", [{ type: "MultiPoint", coordinates: [[1, 2], [3, 4]] }], [{ type: "MultiPoint", coordinates: [1, 2] }, { type: "Point", coordinates: [[1, 2]] }]],
      ["linestring", [{ type: "LineString", coordinates: [[1, 2], [3, 4]] }], [{ type: "LineString", coordinates: [[1, 2]] }]],
      ["multilinestring", [{ type: "MultiLineString", coordinates: [[[1, 2], [3, 4]]] }], [{ type: "MultiLineString", coordinates: [[1, 2], [3, 4]] }]],
      ["polygon", [{ type: "Polygon", coordinates: [ring] }], [{ type: "Polygon", coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] }, { type: "Polygon", coordinates: [[[0, 0], [1, 1], [0, 0]]] }]],
      ["multipolygon", [{ type: "MultiPolygon", coordinates: [[ring], [ring]] }], [{ type: "MultiPolygon", coordinates: [ring] }]],
      ["geometrycollection", [{ type: "GeometryCollection", geometries: [point, { type: "Polygon", coordinates: [ring] }] }], [{ type: "GeometryCollection", geometries: [{ type: "Point" }] }]],
      ["feature", [{ type: "Feature", geometry: point }], [{ type: "Feature", geometry: { type: "Circle" } }, { type: "Feature", geometry: point, properties: {} }]],
      ["featurecollection", [{ type: "FeatureCollection", features: [{ type: "Feature", geometry: point }] }], [{ type: "FeatureCollection", features: [point] }]],
    ];
    it.each(CASES)("%s", async (type, valid, invalid) => {
      for (const value of valid) expect((await converted(type, value)).issues).toEqual({});
      for (const value of invalid) expect((await converted(type, value)).issues).toEqual({ f: `must be of ${type} type` });
    });

    it("allows more members with ALLOW_CUSTOM_FIELDS_IN_GEOJSON", async () => {
      const feature = { type: "Feature", geometry: point, properties: { name: "x" } };
      expect((await converted("feature", feature)).issues).toEqual({ f: "must be of feature type" });
      expect((await converted("feature", feature, { ALLOW_CUSTOM_FIELDS_IN_GEOJSON: true })).issues).toEqual({});
    });
  });
});
