// How `_issues` is rendered: nesting, lists of messages, VALIDATION_ERROR_AS_LIST, and the
// Python reprs inside messages.
import { Decimal128, ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { pySort } from "../../src/validation/errors.ts";
import { pyRepr, pyStr } from "../../src/validation/pyrepr.ts";
import { ENGINES, single } from "./support.ts";

describe.each(ENGINES)("_issues (%s engine)", (engine) => {
  const schema = {
    name: { type: "string", maxlength: 2, regex: "[a-z]+" },
    location: { type: "dict", schema: { city: { type: "string" }, zip: { type: "integer" } } },
    tags: { type: "list", maxlength: 1, schema: { type: "string" } },
  } as const;
  const document = { name: "ABC", location: { city: 1, zip: "x" }, tags: ["a", 2] };

  it("nests sub-documents, keys list items by index, lists several messages", async () => {
    expect(await single(schema, engine).issues(document)).toEqual({
      location: { city: "must be of string type", zip: "must be of integer type" },
      name: ["max length is 2", "value does not match regex '[a-z]+'"],
      tags: ["max length is 1", { 1: "must be of string type" }],
    });
  });

  it("gives every field a list with VALIDATION_ERROR_AS_LIST", async () => {
    expect(await single(schema, engine, { settings: { VALIDATION_ERROR_AS_LIST: true } }).issues(document)).toEqual({
      location: [{ city: ["must be of string type"], zip: ["must be of integer type"] }],
      name: ["max length is 2", "value does not match regex '[a-z]+'"],
      tags: ["max length is 1", { 1: ["must be of string type"] }],
    });
  });

  it("is empty for a valid document", async () => {
    const result = await single(schema, engine).check({ name: "ab" });
    expect(result).toEqual({ valid: true, issues: {}, document: { name: "ab" } });
  });
});

describe("Python reprs", () => {
  it("quote strings as Python does", () => {
    expect(pyRepr(["boss"])).toBe("['boss']");
    expect(pyRepr(["it's", 'say "hi"', "both ' and \"", "tab\there", "line\nbreak", "back\\slash", "é", "\u0000"])).toBe(
      `["it's", 'say "hi"', 'both \\' and "', 'tab\\there', 'line\\nbreak', 'back\\\\slash', 'é', '\\x00']`,
    );
  });

  it("write numbers, booleans, None, dicts and sets as Python does", () => {
    expect(pyRepr([1, 1.5, -0.25, 1e-5, 1.5e-7, 1e21, true, false, null])).toBe("[1, 1.5, -0.25, 1e-05, 1.5e-07, 1000000000000000000000, True, False, None]");
    expect(pyRepr({ a: [1, { b: "x" }] })).toBe("{'a': [1, {'b': 'x'}]}");
    expect(pyRepr(new Set(["a"]))).toBe("{'a'}");
    expect(pyRepr(new Set())).toBe("set()");
  });

  it("write datetimes, ids and decimals as Python's str() and repr() do", () => {
    const date = new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 600));
    expect(pyStr(date)).toBe("2020-01-02 03:04:05.600000");
    expect(pyStr(new Date(Date.UTC(2020, 0, 2)))).toBe("2020-01-02 00:00:00");
    expect(pyRepr(date)).toBe("datetime.datetime(2020, 1, 2, 3, 4, 5, 600000)");
    expect(pyRepr(new Date(Date.UTC(2020, 0, 2)))).toBe("datetime.datetime(2020, 1, 2, 0, 0)");
    const id = new ObjectId("5f0000000000000000000001");
    expect(pyStr(id)).toBe("5f0000000000000000000001");
    expect(pyRepr([id])).toBe("[ObjectId('5f0000000000000000000001')]");
    expect(pyStr(Decimal128.fromString("1.10"))).toBe("1.10");
    expect(pyRepr(new Uint8Array([97, 39, 0]))).toBe("b'a\\'\\x00'");
  });
});

describe("pySort", () => {
  // CPython 3.11's list.sort with a `<` that is true for equal items, as Cerberus' is.
  const lt = (a: [number, string], b: [number, string]) => a[0] <= b[0];
  it("keeps CPython's order for equal items", () => {
    const list: Array<[number, string]> = [[1, "a"], [1, "b"]];
    pySort(list, lt);
    expect(list.map((x) => x[1])).toEqual(["b", "a"]);
    const three: Array<[number, string]> = [[0, "x"], [1, "a"], [1, "b"]];
    pySort(three, lt);
    expect(three.map((x) => x[1])).toEqual(["x", "b", "a"]);
  });

  it("sorts distinct items", () => {
    const list: Array<[number, string]> = [3, 1, 2, 0].map((n) => [n, String(n)]);
    pySort(list, lt);
    expect(list.map((x) => x[0])).toEqual([0, 1, 2, 3]);
  });
});
