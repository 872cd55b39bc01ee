// Every value rule, valid and invalid (Cerberus' exact wording), at the top level, inside a
// sub-document, as a list item and in a PATCH, on both engines.
import { describe, expect, it } from "vitest";
import type { FieldSchema } from "../../src/settings/types.ts";
import type { Issues } from "../../src/validation/types.ts";
import { ENGINES, single } from "./support.ts";

type Expected = string | Array<string | Issues> | Issues;

interface Case {
  name: string;
  field: FieldSchema;
  valid: unknown[];
  invalid: Array<[unknown, Expected]>;
}

const CASES: Case[] = [
  { name: "minlength on strings", field: { type: "string", minlength: 2 }, valid: ["ab"], invalid: [["a", "min length is 2"]] },
  { name: "minlength on lists", field: { type: "list", minlength: 2 }, valid: [[1, 2]], invalid: [[[1], "min length is 2"]] },
  { name: "maxlength on strings", field: { type: "string", maxlength: 3 }, valid: ["abc", ""], invalid: [["abcd", "max length is 3"]] },
  { name: "maxlength counts code points", field: { type: "string", maxlength: 2 }, valid: ["😀😀"], invalid: [["😀😀😀", "max length is 2"]] },
  { name: "maxlength on lists", field: { type: "list", maxlength: 1 }, valid: [["a"]], invalid: [[["a", "b"], "max length is 1"]] },
  { name: "maxlength on dicts", field: { type: "dict", maxlength: 1 }, valid: [{ a: 1 }], invalid: [[{ a: 1, b: 2 }, "max length is 1"]] },
  { name: "min", field: { type: "integer", min: 5 }, valid: [5, 6], invalid: [[4, "min value is 5"]] },
  { name: "max with a float bound", field: { type: "number", max: 1.5 }, valid: [1.5, -3], invalid: [[1.75, "max value is 1.5"]] },
  { name: "min on strings", field: { type: "string", min: "b" }, valid: ["b", "c"], invalid: [["a", "min value is b"]] },
  { name: "allowed on a scalar", field: { type: "string", allowed: ["a", "b"] }, valid: ["a"], invalid: [["boss", "unallowed value boss"]] },
  { name: "allowed on an integer", field: { type: "integer", allowed: [1, 2] }, valid: [2], invalid: [[3, "unallowed value 3"]] },
  {
    name: "allowed on a list checks every item",
    field: { type: "list", allowed: ["author", "copy"] },
    valid: [["author", "copy"], []],
    invalid: [
      [["boss"], "unallowed values ['boss']"],
      [["author", "x", "y", "x"], "unallowed values ['x', 'y']"],
    ],
  },
  { name: "allowed without a type", field: { allowed: [1, "a"] }, valid: [1, "a", [1]], invalid: [[2, "unallowed value 2"], [[1, 3], "unallowed values [3]"]] },
  { name: "forbidden on a scalar", field: { type: "string", forbidden: ["root"] }, valid: ["user"], invalid: [["root", "unallowed value root"]] },
  { name: "forbidden on a list", field: { type: "list", forbidden: ["root", 0] }, valid: [["user"]], invalid: [[["a", 0, "root"], "unallowed values [0, 'root']"]] },
  {
    name: "regex must match the whole value",
    field: { type: "string", regex: "[a-z]+" },
    valid: ["abc"],
    invalid: [
      ["abc1", "value does not match regex '[a-z]+'"],
      ["1abc", "value does not match regex '[a-z]+'"],
    ],
  },
  { name: "regex in Python syntax", field: { type: "string", regex: "(?P<area>\\d{3})-(?P=area)" }, valid: ["555-555"], invalid: [["555-556", "value does not match regex '(?P<area>\\d{3})-(?P=area)'"]] },
  { name: "regex that only compiles without the u flag", field: { type: "string", regex: "\\d{3}\\-\\d{2}" }, valid: ["123-45"], invalid: [["12345", "value does not match regex '\\d{3}\\-\\d{2}'"]] },
  {
    name: "contains",
    field: { type: "list", contains: ["a", "b"] },
    valid: [["b", "c", "a"]],
    invalid: [
      [["a"], "missing members {'b'}"],
      [[], "missing members {'a', 'b'}"],
    ],
  },
  { name: "contains with one value", field: { type: "list", contains: "a" }, valid: [["a"]], invalid: [[["b"], "missing members {'a'}"]] },
  { name: "empty: false", field: { type: "string", empty: false, minlength: 3 }, valid: ["abc"], invalid: [["", "empty values not allowed"]] },
  { name: "empty: true skips the length rules", field: { type: "string", empty: true, minlength: 3, regex: "x+" }, valid: [""], invalid: [["ab", ["min length is 3", "value does not match regex 'x+'"]]] },
  { name: "empty lists", field: { type: "list", empty: false }, valid: [[1]], invalid: [[[], "empty values not allowed"]] },
  { name: "nullable", field: { type: "string", nullable: true, minlength: 2, allowed: ["ab"] }, valid: [null, "ab"], invalid: [["a", ["unallowed value a", "min length is 2"]]] },
  { name: "null without nullable", field: { type: "string", allowed: ["a"] }, valid: ["a"], invalid: [[null, "null value not allowed"]] },
  {
    name: "items",
    field: { type: "list", items: [{ type: "string" }, { type: "integer", min: 1 }] },
    valid: [["a", 1]],
    invalid: [
      [["a"], "length of list should be 2, it is 1"],
      [[1, 0], { 0: "must be of string type", 1: "min value is 1" }],
    ],
  },
  {
    name: "schema for list items",
    field: { type: "list", schema: { type: "integer", min: 0 } },
    valid: [[1, 2], []],
    invalid: [[[1, -1, "x"], { 1: "min value is 0", 2: "must be of integer type" }]],
  },
  {
    name: "schema for a sub-document",
    field: { type: "dict", schema: { a: { type: "string" }, b: { type: "integer", required: true } } },
    valid: [{ a: "x", b: 1 }],
    invalid: [
      [{ a: 1, b: 1 }, { a: "must be of string type" }],
      [{ b: 1, c: 1 }, { c: "unknown field" }],
    ],
  },
  {
    name: "keysrules",
    field: { type: "dict", keysrules: { type: "string", regex: "[a-z]+" } },
    valid: [{ abc: 1 }],
    invalid: [[{ ABC: 1, ok: 2 }, { ABC: "value does not match regex '[a-z]+'" }]],
  },
  { name: "keyschema (old name)", field: { type: "dict", keyschema: { type: "string", maxlength: 2 } }, valid: [{ ab: 1 }], invalid: [[{ abc: 1 }, { abc: "max length is 2" }]] },
  { name: "valuesrules", field: { type: "dict", valuesrules: { type: "integer" } }, valid: [{ a: 1 }], invalid: [[{ a: 1, b: "x" }, { b: "must be of integer type" }]] },
  { name: "valueschema (old name)", field: { type: "dict", valueschema: { type: "boolean" } }, valid: [{ a: true }], invalid: [[{ a: "x" }, { a: "must be of boolean type" }]] },
  {
    name: "anyof",
    field: { type: "integer", anyof: [{ min: 0, max: 5 }, { min: 10, max: 15 }] },
    valid: [3, 12],
    invalid: [[7, ["no definitions validate", { "anyof definition 0": "max value is 5", "anyof definition 1": "min value is 10" }]]],
  },
  {
    name: "allof",
    field: { allof: [{ type: "integer" }, { min: 3 }] },
    valid: [4],
    invalid: [[2, ["one or more definitions don't validate", { "allof definition 1": "min value is 3" }]]],
  },
  {
    name: "oneof",
    field: { type: "integer", oneof: [{ min: 0 }, { max: 10 }] },
    valid: [-1, 11],
    invalid: [[5, "none or more than one rule validate"]],
  },
  {
    name: "noneof",
    field: { noneof: [{ type: "integer" }, { type: "string" }] },
    valid: [true],
    invalid: [[5, ["one or more definitions validate", { "noneof definition 1": "must be of string type" }]]],
  },
  {
    name: "anyof_type (type saver)",
    field: { anyof_type: ["string", "integer"] },
    valid: ["a", 1],
    invalid: [[1.5, ["no definitions validate", { "anyof definition 0": "must be of string type", "anyof definition 1": "must be of integer type" }]]],
  },
  {
    name: "a type error hides the other rules",
    field: { type: "string", maxlength: 1, allowed: ["a"], regex: "a" },
    valid: ["a"],
    invalid: [[12, "must be of string type"]],
  },
  { name: "a list of types", field: { type: ["string", "integer"] }, valid: ["a", 1], invalid: [[true, "must be of ['string', 'integer'] type"]] },
];

describe.each(ENGINES)("rules (%s engine)", (engine) => {
  describe.each(CASES)("$name", ({ field, valid, invalid }) => {
    const top = single({ f: field }, engine);
    const nested = single({ outer: { type: "dict", schema: { f: field } } }, engine);
    const listed = single({ all: { type: "list", schema: field } }, engine);

    it("accepts valid values at the top level, in a sub-document, in a list and in a PATCH", async () => {
      for (const value of valid) {
        expect(await top.issues({ f: value })).toEqual({});
        expect(await nested.issues({ outer: { f: value } })).toEqual({});
        expect(await listed.issues({ all: [value] })).toEqual({});
        expect(await top.issues({ f: value }, "PATCH", { original: {} })).toEqual({});
      }
    });

    it("reports invalid values where they are", async () => {
      for (const [value, expected] of invalid) {
        expect(await top.issues({ f: value })).toEqual({ f: expected });
        expect(await nested.issues({ outer: { f: value } })).toEqual({ outer: { f: expected } });
        expect(await listed.issues({ all: [value] })).toEqual({ all: { 0: expected } });
        expect(await top.issues({ f: value }, "PATCH", { original: {} })).toEqual({ f: expected });
      }
    });
  });
});
