// Start-up validation of schemas: what is refused, and that the message names the resource,
// the field, the rule and the closest valid name.
import { describe, expect, it } from "vitest";
import { normalizeSettings } from "../../src/settings/normalize.ts";
import type { Settings } from "../../src/settings/types.ts";
import { checkSchemaDefinition, compileValidator, type ValidatorExtensions } from "../../src/validation/index.ts";
import { closest } from "../../src/settings/suggest.ts";

function check(schema: Record<string, unknown>, options: { resource?: Record<string, unknown>; settings?: Settings; extensions?: ValidatorExtensions } = {}) {
  const config = normalizeSettings({ ...options.settings, DOMAIN: { people: { schema, ...options.resource } as never, works: { schema: { title: { type: "string" } } } } });
  return () => checkSchemaDefinition(config.DOMAIN.people!, config, options.extensions);
}

describe("checkSchemaDefinition", () => {
  it("accepts a valid schema", () => {
    expect(
      check({
        name: { type: "string", minlength: 1, maxlength: 10, regex: "[a-z]+", required: true, unique: true },
        tags: { type: "list", schema: { type: "string", allowed: ["a"] } },
        place: { type: "dict", schema: { city: { type: "string", default: "x" } }, keyschema: { type: "string" } },
        owner: { type: "objectid", data_relation: { resource: "works", field: "_id", embeddable: true } },
        either: { anyof_type: ["string", "integer"], excludes: "name", dependencies: { name: ["a"] } },
      }),
    ).not.toThrow();
  });

  it("refuses an unknown rule, suggesting the closest name", () => {
    expect(check({ name: { type: "string", maxlenght: 10 } })).toThrow("Schema of resource 'people', field 'name': unknown rule 'maxlenght' (did you mean 'maxlength'?)");
  });

  it("names nested fields by their path", () => {
    expect(check({ place: { type: "dict", schema: { city: { type: "string", nullabel: true } } } })).toThrow("field 'place.city': unknown rule 'nullabel' (did you mean 'nullable'?)");
    expect(check({ tags: { type: "list", schema: { type: "string", alowed: ["a"] } } })).toThrow("field 'tags[]': unknown rule 'alowed' (did you mean 'allowed'?)");
    expect(check({ either: { anyof: [{ type: "string" }, { mni: 1 }] } })).toThrow("field 'either (anyof definition 1)': unknown rule 'mni' (did you mean 'min'?)");
  });

  it("refuses bad rule values", () => {
    expect(check({ name: { type: "string", minlength: "ten" } })).toThrow("field 'name': rule 'minlength' must be a non-negative integer, got 'ten'");
    expect(check({ name: { type: "strng" } })).toThrow("field 'name': rule 'type': unknown type 'strng' (did you mean 'string'?)");
    expect(check({ name: { allowed: "abc" } })).toThrow("field 'name': rule 'allowed' must be a list, got 'abc'");
    expect(check({ name: { required: "yes" } })).toThrow("field 'name': rule 'required' must be a boolean, got 'yes'");
    expect(check({ name: { type: "string", regex: "(" } })).toThrow("field 'name': rule 'regex' is not a valid regular expression: '('");
    expect(check({ name: { schema: 5 } })).toThrow("field 'name': rule 'schema' must be a dict, got 5");
    expect(check({ name: { coerce: 5 } })).toThrow("field 'name': rule 'coerce' must be a function or the name of a registered coercer, got 5");
  });

  it("lists every problem", () => {
    expect(check({ a: { maxlenght: 1 }, b: { type: "strng" } })).toThrow(/field 'a'.*\n.*field 'b'/);
  });

  it("refuses a data_relation to an unknown resource, suggesting the closest one", () => {
    expect(check({ owner: { type: "objectid", data_relation: { resource: "wroks" } } })).toThrow("field 'owner': rule 'data_relation': unknown resource 'wroks' (did you mean 'works'?)");
    expect(check({ owner: { data_relation: { field: "_id" } } })).toThrow("rule 'data_relation' needs a 'resource'");
    expect(check({ owner: { data_relation: { resource: "works", embedable: true } } })).toThrow("rule 'data_relation': 'embedable' is not a data_relation key (did you mean 'embeddable'?)");
  });

  it("refuses Eve's automatic fields and field names with '$' or '.'", () => {
    expect(check({ _created: { type: "datetime" } })).toThrow("field '_created': this field is handled automatically and cannot be in the schema");
    expect(check({ _deleted: { type: "boolean" } }, { resource: { soft_delete: true } })).toThrow("field '_deleted'");
    expect(check({ _deleted: { type: "boolean" } })).not.toThrow();
    expect(check({ "a.b": { type: "string" } })).toThrow("field 'a.b': a field name cannot contain '$' or '.'");
    expect(check({ a: { type: "dict", schema: { $b: {} } } })).toThrow("field 'a.$b': a field name cannot contain '$' or '.'");
    expect(check({ a: "string" })).toThrow("field 'a': schema definition for field 'a' must be a dict");
  });

  it("knows the extensions' rules, types, coercers and validators", () => {
    const extensions: ValidatorExtensions = {
      rules: { isodd: () => undefined, mirrors: { validate: () => undefined, check: (v) => (typeof v === "string" ? undefined : "must name a field") } },
      types: { even: () => true },
      coercers: { int: Number },
      validators: { lowercase: () => undefined },
    };
    expect(check({ n: { type: "even", isodd: true, coerce: "int", check_with: "lowercase" } }, { extensions })).not.toThrow();
    expect(check({ n: { mirrors: 5 } }, { extensions })).toThrow("field 'n': rule 'mirrors' must name a field");
    expect(check({ n: { isod: true } }, { extensions })).toThrow("unknown rule 'isod' (did you mean 'isodd'?)");
    expect(check({ n: { coerce: "itn" } }, { extensions })).toThrow("field 'n': rule 'coerce': no coercer named 'itn' is registered (did you mean 'int'?)");
  });

  it("with transparent_schema_rules, ignores unknown rules and unusable values, not broken references", () => {
    const transparent = { resource: { transparent_schema_rules: true } };
    expect(check({ name: { type: "string", description: "the name", minlength: "ten" } }, transparent)).not.toThrow();
    expect(check({ name: { type: "string", description: "x" } }, { settings: { TRANSPARENT_SCHEMA_RULES: true } })).not.toThrow();
    expect(check({ owner: { data_relation: { resource: "nope" } } }, transparent)).toThrow("unknown resource 'nope'");
  });

  it("refuses a DATE_FORMAT that cannot parse dates", () => {
    expect(check({}, { settings: { DATE_FORMAT: "%Y-%Q" } })).toThrow("DATE_FORMAT");
  });
});

describe("compileValidator", () => {
  it("refuses what checkSchemaDefinition refuses", () => {
    // @ts-expect-error the Settings type catches the typo at compile time too
    const config = normalizeSettings({ DOMAIN: { people: { schema: { name: { maxlenght: 1 } } } } });
    expect(() => compileValidator(config.DOMAIN.people!, config)).toThrow("unknown rule 'maxlenght'");
  });

  it("with transparent_schema_rules, validates with the usable rules only", async () => {
    // A settings file can hold anything; the types cannot stop it.
    const name = JSON.parse('{ "type": "string", "description": "x", "minlength": "ten", "maxlength": 2 }');
    const config = normalizeSettings({ DOMAIN: { people: { transparent_schema_rules: true, schema: { name } } } });
    const validator = compileValidator(config.DOMAIN.people!, config);
    const result = await validator.validate({ name: "abc" }, "POST", { config, resource: config.DOMAIN.people!, findOne: async () => null });
    expect(result.issues).toEqual({ name: "max length is 2" });
  });
});

describe("closest", () => {
  it("finds typos, not unrelated names", () => {
    expect(closest("maxlenght", ["maxlength", "minlength"])).toBe("maxlength");
    expect(closest("Type", ["type"])).toBe("type");
    expect(closest("banana", ["maxlength", "type"])).toBeUndefined();
  });
});
