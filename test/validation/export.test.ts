// toJsonSchema: the schema of documents as clients send them, checked by validating wire
// documents against it with a JSON Schema validator.
import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import type { Schema } from "../../src/settings/types.ts";
import { toJsonSchema } from "../../src/validation/index.ts";

const schema: Schema = {
  name: { type: "string", minlength: 1, maxlength: 10, required: true, regex: "[A-Z][a-z]+" },
  age: { type: "integer", min: 0, max: 150, nullable: true, default: 0 },
  role: { type: "list", allowed: ["author", "copy"] },
  level: { type: "string", allowed: ["a", "b"], nullable: true },
  owner: { type: "objectid" },
  born: { type: "datetime" },
  location: { type: "dict", schema: { city: { type: "string", required: true } } },
  pair: { type: "list", items: [{ type: "string" }, { type: "number" }] },
  counts: { type: "dict", keysrules: { type: "string", regex: "[a-z]+" }, valuesrules: { type: "integer" } },
  either: { anyof: [{ type: "string" }, { type: "integer" }] },
  spot: { type: "point" },
  code: { type: "string", readonly: true },
};

const json = toJsonSchema(schema, { dateFormat: "%Y-%m-%d" });
const validator = new Validator(json as never, "2020-12");
const valid = (document: unknown) => validator.validate(document).valid;

describe("toJsonSchema", () => {
  it("describes the document", () => {
    expect(json.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(json.type).toBe("object");
    expect(json.required).toEqual(["name"]);
    expect(json.additionalProperties).toBe(false);
    const properties = json.properties as Record<string, Record<string, unknown>>;
    expect(properties.name).toEqual({ type: "string", minLength: 1, maxLength: 10, pattern: "^(?:[A-Z][a-z]+$)" });
    expect(properties.age).toEqual({ type: ["integer", "null"], minimum: 0, maximum: 150, default: 0 });
    expect(properties.owner).toEqual({ type: "string", pattern: "^[0-9a-fA-F]{24}$" });
    expect(properties.born).toEqual({ type: "string", description: "a date in the format %Y-%m-%d" });
    expect(properties.code!.readOnly).toBe(true);
  });

  it("accepts what the validator accepts", () => {
    expect(
      valid({
        name: "Ann",
        age: null,
        role: ["copy"],
        level: null,
        owner: "5f0000000000000000000001",
        born: "2024-01-01",
        location: { city: "Rome" },
        pair: ["a", 1.5],
        counts: { a: 1 },
        either: 3,
        spot: { type: "Point", coordinates: [1, 2] },
      }),
    ).toBe(true);
    // An altitude, and the bounds themselves.
    expect(valid({ name: "Ann", spot: { type: "Point", coordinates: [180, -90, 12] } })).toBe(true);
  });

  it.each([
    ["a missing required field", { age: 3 }],
    ["an unknown field", { name: "Ann", extra: 1 }],
    ["a value out of range", { name: "Ann", age: 200 }],
    ["a list item not allowed", { name: "Ann", role: ["boss"] }],
    ["a bad id", { name: "Ann", owner: "xyz" }],
    ["a sub-document without its required field", { name: "Ann", location: {} }],
    ["a list of the wrong length", { name: "Ann", pair: ["a"] }],
    ["a bad key", { name: "Ann", counts: { A: 1 } }],
    ["a value of none of the types", { name: "Ann", either: true }],
    ["a bad point", { name: "Ann", spot: { type: "Point", coordinates: [1] } }],
    ["a longitude out of range", { name: "Ann", spot: { type: "Point", coordinates: [181, 0] } }],
    ["a latitude out of range", { name: "Ann", spot: { type: "Point", coordinates: [0, -90.5] } }],
    ["a position of four numbers", { name: "Ann", spot: { type: "Point", coordinates: [1, 2, 3, 4] } }],
    ["a name that does not match the whole pattern", { name: "Ann1" }],
  ])("refuses %s", (_label, document) => {
    expect(valid(document)).toBe(false);
  });

  it("lets sub-documents inherit allow_unknown", () => {
    const open = new Validator(toJsonSchema({ location: { type: "dict", schema: { city: { type: "string" } } } }, { allowUnknown: true }) as never, "2020-12");
    expect(open.validate({ other: 1, location: { zip: 1 } }).valid).toBe(true);
  });
});
