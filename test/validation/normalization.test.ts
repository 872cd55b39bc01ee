// Cerberus' normalization: coerce, default_setter, rename. The shapes of the expected issues
// were checked against Cerberus 1.3 with Python's int() as the coercer.
import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import type { ValidatorExtensions } from "../../src/validation/index.ts";
import { ENGINES, single } from "./support.ts";

const ID = new ObjectId("5f0000000000000000000001");

/** Python's int(), failing as Python words it. */
function int(value: unknown): number {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^\s*[+-]?\d+\s*$/.test(value)) return Number(value);
  throw new Error(`invalid literal for int() with base 10: '${String(value)}'`);
}

const extensions: ValidatorExtensions = {
  coercers: { int, strip: (v) => (typeof v === "string" ? v.trim() : v), upper: (v) => String(v).toUpperCase() },
  defaultSetters: { fullname: (doc) => `${doc.first} ${doc.last}` },
};

describe.each(ENGINES)("normalization (%s engine)", (engine) => {
  describe("coerce", () => {
    it("runs a function, a named coercer or a chain of them", async () => {
      const t = single({ a: { type: "integer", coerce: int }, b: { type: "integer", coerce: ["strip", "int"] }, c: { type: "string", coerce: "upper" } }, engine, { extensions });
      const result = await t.check({ a: "1", b: " 7 ", c: "x" });
      expect(result.issues).toEqual({});
      expect(result.document).toEqual({ a: 1, b: 7, c: "X" });
    });

    it("reports a failure where Cerberus does, and leaves the value as sent", async () => {
      const t = single(
        {
          a: { type: "integer", coerce: "int" },
          o: { type: "dict", schema: { a: { type: "integer", coerce: "int" } } },
          l: { type: "list", schema: { type: "integer", coerce: "int" } },
          n: { nullable: true, coerce: "int" },
        },
        engine,
        { extensions },
      );
      const result = await t.check({ a: "abc", o: { a: "x" }, l: ["1", "y"], n: null });
      expect(result.issues).toEqual({
        a: ["field 'a' cannot be coerced: invalid literal for int() with base 10: 'abc'", "must be of integer type"],
        l: { 1: ["must be of integer type", "field '1' cannot be coerced: invalid literal for int() with base 10: 'y'"] },
        o: { a: ["must be of integer type", "field 'a' cannot be coerced: invalid literal for int() with base 10: 'x'"] },
      });
      expect(result.document).toEqual({ a: "abc", o: { a: "x" }, l: [1, "y"], n: null });
    });

    it("is reported with a readonly error", async () => {
      const t = single({ b: { coerce: "int", readonly: true } }, engine, { extensions });
      expect(await t.issues({ b: "x" })).toEqual({ b: ["field 'b' cannot be coerced: invalid literal for int() with base 10: 'x'", "field is read-only"] });
    });

    it("also applies to defaults and to keys through keysrules", async () => {
      const t = single({ a: { type: "string", default: "x", coerce: "upper" }, m: { type: "dict", keysrules: { type: "string", coerce: "upper" } } }, engine, { extensions });
      expect((await t.check({ m: { k: 1 } })).document).toEqual({ a: "X", m: { K: 1 } });
    });

    it("may produce values JSON Schema cannot take: they are still checked", async () => {
      const t = single({ a: { type: "integer", coerce: (v: unknown) => BigInt(String(v)) }, b: { type: "string", maxlength: 1 } }, engine);
      expect(await t.issues({ a: "1", b: "xy" })).toEqual({ a: "must be of integer type", b: "max length is 1" });
    });

    it("does not run on PATCH without normalize_on_patch", async () => {
      const on = single({ a: { type: "integer", coerce: "int" } }, engine, { extensions });
      const off = single({ a: { type: "integer", coerce: "int" } }, engine, { extensions, resource: { normalize_on_patch: false } });
      expect((await on.check({ a: "1" }, "PATCH", { original: { _id: ID } })).document).toEqual({ a: 1 });
      expect((await off.check({ a: "abc" }, "PATCH", { original: { _id: ID } })).issues).toEqual({ a: "must be of integer type" });
    });
  });

  describe("default_setter", () => {
    it("computes a missing value from the document", async () => {
      const t = single({ first: { type: "string" }, last: { type: "string" }, full: { type: "string", default_setter: "fullname" }, n: { type: "integer", default_setter: () => 3 } }, engine, { extensions });
      expect((await t.check({ first: "Ann", last: "Lee" })).document).toEqual({ first: "Ann", last: "Lee", full: "Ann Lee", n: 3 });
      expect((await t.check({ first: "Ann", last: "Lee", full: "x" })).document.full).toBe("x");
    });

    it("reports a failure", async () => {
      const t = single({ d: { default_setter: () => { throw new Error("bad value"); } } }, engine);
      expect(await t.issues({})).toEqual({ d: "default value for 'd' cannot be set: bad value" });
    });

    it("leaves a stored field alone on PUT, as Eve does", async () => {
      const t = single({ n: { type: "integer", default_setter: () => 3 } }, engine);
      expect((await t.check({}, "PUT", { original: { _id: ID, n: 1 } })).document).toEqual({});
      expect((await t.check({}, "PUT", { original: { _id: ID } })).document).toEqual({ n: 3 });
    });
  });

  describe("rename", () => {
    it("moves the value before it is validated under its new name", async () => {
      const t = single({ a: { rename: "b" }, b: { type: "integer" }, c: { rename_handler: "upper" }, C: { type: "string" } }, engine, { extensions });
      const result = await t.check({ a: "x", c: "y" });
      expect(result.issues).toEqual({ b: "must be of integer type" });
      expect(result.document).toEqual({ b: "x", C: "y" });
    });
  });
});
