// Rules that look at other fields (dependencies, excludes), the *of rules' nested wording, and
// how several errors on one field are ordered. Expected values were checked against Cerberus
// 1.3 on Python 3.11, whose ordering of equal errors is not their insertion order.
import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { ENGINES, single } from "./support.ts";

const ID = new ObjectId("5f0000000000000000000001");

describe.each(ENGINES)("cross-field rules (%s engine)", (engine) => {
  describe("dependencies", () => {
    it("as a list: every named field must be present (errors in Cerberus' order)", async () => {
      const t = single({ a: { type: "string", dependencies: ["b", "c", "d"] }, b: {}, c: {}, d: {} }, engine);
      expect(await t.issues({ a: "x", b: 1, c: 1, d: 1 })).toEqual({});
      expect(await t.issues({ a: "x", c: 1 })).toEqual({ a: ["field 'd' is required", "field 'b' is required"] });
      expect(await t.issues({ a: "x" })).toEqual({ a: ["field 'd' is required", "field 'b' is required", "field 'c' is required"] });
    });

    it("as a mapping: the fields must hold one of the values", async () => {
      const t = single({ a: { type: "string", dependencies: { b: [1, 2], c: "x" } }, b: {}, c: {} }, engine);
      expect(await t.issues({ a: "q", b: 2, c: "x" })).toEqual({});
      expect(await t.issues({ a: "q", b: 3 })).toEqual({ a: "depends on these values: {'b': [1, 2], 'c': 'x'}" });
    });

    it("follows dotted paths, and ^ to the document root", async () => {
      const t = single({ a: { dependencies: "b.c" }, b: { type: "dict" }, o: { type: "dict", schema: { p: { dependencies: "^x" } } }, x: {} }, engine);
      expect(await t.issues({ a: 1, b: { c: 1 } })).toEqual({});
      expect(await t.issues({ a: 1, b: { d: 1 } })).toEqual({ a: "field 'b.c' is required" });
      expect(await t.issues({ o: { p: 1 } })).toEqual({ o: { p: "field '^x' is required" } });
      expect(await t.issues({ o: { p: 1 }, x: 1 })).toEqual({});
    });

    it("on PATCH and PUT, are satisfied by stored fields the request does not send", async () => {
      const t = single({ a: { type: "string", dependencies: ["b"] }, b: {} }, engine);
      expect(await t.issues({ a: "x" }, "PATCH", { original: { _id: ID, b: 1 } })).toEqual({});
      expect(await t.issues({ a: "x" }, "PATCH", { original: { _id: ID } })).toEqual({ a: "field 'b' is required" });
    });

    it("are not checked when the field's type is wrong", async () => {
      const t = single({ a: { type: "integer", dependencies: ["b"] }, b: {} }, engine);
      expect(await t.issues({ a: "x" })).toEqual({ a: "must be of integer type" });
    });
  });

  describe("excludes", () => {
    it("refuses the excluded fields next to the field", async () => {
      const t = single({ a: { excludes: ["b", "c"] }, b: {}, c: {} }, engine);
      expect(await t.issues({ a: 1 })).toEqual({});
      expect(await t.issues({ a: 1, c: 2 })).toEqual({ a: "'b', 'c' must not be present with 'a'" });
    });

    it("makes mutually exclusive required fields one-of-them required", async () => {
      const t = single({ a: { excludes: "b", required: true }, b: { excludes: "a", required: true } }, engine);
      expect(await t.issues({ a: 1 })).toEqual({});
      expect(await t.issues({})).toEqual({ a: "required field", b: "required field" });
      expect(await t.issues({ a: 1, b: 1 })).toEqual({ a: "'b' must not be present with 'a'", b: "'a' must not be present with 'b'" });
    });
  });

  describe("*of rules", () => {
    it("show each failing definition's errors under '<rule> definition <n>'", async () => {
      const t = single({ a: { type: "dict", anyof: [{ schema: { x: { type: "string" } } }, { schema: { y: { type: "string", required: true } } }] } }, engine);
      expect(await t.issues({ a: { y: "ok" } })).toEqual({});
      expect(await t.issues({ a: { x: 1 } })).toEqual({
        a: ["no definitions validate", { "anyof definition 0": { x: "must be of string type" }, "anyof definition 1": { x: "unknown field", y: "required field" } }],
      });
    });

    it("skip required fields of their definitions on PATCH", async () => {
      const t = single({ a: { type: "dict", anyof: [{ schema: { x: { type: "string" } } }, { schema: { y: { type: "string", required: true } } }] } }, engine);
      expect(await t.issues({ a: { x: 1 } }, "PATCH", { original: { _id: ID } })).toEqual({
        a: ["no definitions validate", { "anyof definition 0": { x: "must be of string type" }, "anyof definition 1": { x: "unknown field" } }],
      });
    });

    it("nest", async () => {
      const t = single({ a: { anyof: [{ allof: [{ type: "integer" }, { min: 10 }] }, { type: "string" }] } }, engine);
      expect(await t.issues({ a: 2 })).toEqual({
        a: ["no definitions validate", { "anyof definition 0": ["one or more definitions don't validate", { "allof definition 1": "min value is 10" }], "anyof definition 1": "must be of string type" }],
      });
    });

    it("apply to each list item", async () => {
      const t = single({ a: { type: "list", schema: { anyof: [{ type: "string" }, { type: "integer", min: 3 }] } } }, engine);
      expect(await t.issues({ a: ["x", 1] })).toEqual({ a: { 1: ["no definitions validate", { "anyof definition 0": "must be of string type", "anyof definition 1": "min value is 3" }] } });
    });
  });

  describe("several errors", () => {
    it("on a field come in Cerberus' order, before the errors of its items", async () => {
      const t = single({ a: { type: "list", minlength: 3, allowed: [1, 2], schema: { type: "integer", max: 1 } } }, engine);
      expect(await t.issues({ a: [1, 2, 3] })).toEqual({ a: ["unallowed values [3]", { 1: "max value is 1", 2: "max value is 1" }] });
      expect(await t.issues({ a: [5] })).toEqual({ a: ["unallowed values [5]", "min length is 3", { 0: "max value is 1" }] });
    });

    it("are keyed in Cerberus' order: list indexes, then names by code point", async () => {
      const t = single({ b: { type: "integer" }, a: { type: "integer" }, C: { type: "integer" }, _x: { type: "integer" } }, engine);
      const issues = await t.issues({ b: "x", a: "y", C: "z", _x: "w" });
      expect(Object.keys(issues)).toEqual(["C", "_x", "a", "b"]);
    });
  });
});
