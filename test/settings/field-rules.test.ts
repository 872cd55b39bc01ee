// Start-up checks of field rules (src/settings/field-rules.ts): a malformed rule, a rule where it
// cannot be enforced, or a setting that would reveal a field to callers who may not read it stops
// start-up with a message naming the resource and the field — transparent_schema_rules or not.
import { describe, expect, it } from "vitest";
import { SettingsError, validateSettings } from "../../src/settings/validate.ts";
import { createHandler } from "../../src/handler.ts";
import type { FieldSchema, ResourceSettings, Schema } from "../../src/settings/types.ts";

function problems(resource: ResourceSettings): string[] {
  try {
    validateSettings({ DOMAIN: { people: resource } });
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as SettingsError).problems;
  }
  return [];
}

const hidden: FieldSchema = { type: "string", allowed_read_roles: ["hr"] };

describe("field rules at start-up", () => {
  it("accepts rules on fields, dicts' fields and the fields of a list's dicts, and a hook", () => {
    const schema: Schema = {
      salary: { type: "integer", allowed_read_roles: ["hr"], allowed_write_roles: ["hr", "payroll"] },
      profile: { type: "dict", allowed_write_roles: ["hr"], schema: { ssn: hidden } },
      lines: { type: "list", schema: { type: "dict", schema: { cost: hidden } } },
      review: { type: "string", field_access: () => true },
    };
    expect(problems({ schema })).toEqual([]);
    expect(() => createHandler({ DOMAIN: { people: { schema } } })).not.toThrow();
  });

  it.each([
    ["an empty list, which Eve's resource-level reading would make no rule at all", { allowed_read_roles: [] }, "'allowed_read_roles' must be a non-empty list of role names"],
    ["a string for a list", { allowed_write_roles: "hr" }, "'allowed_write_roles' must be a non-empty list of role names"],
    ["an empty role name", { allowed_read_roles: ["hr", ""] }, "'allowed_read_roles' must be a non-empty list of role names"],
    ["a hook that is no function", { field_access: "owner" }, "'field_access' must be a function"],
  ])("refuses %s", (_what, rule, message) => {
    // Settings as a JSON file or an untyped module could give them.
    const found = problems({ schema: { profile: { type: "dict", schema: { ssn: { type: "string", ...rule } as FieldSchema } } } });
    expect(found).toHaveLength(1);
    expect(found[0]).toContain("Resource 'people'");
    expect(found[0]).toContain("field 'profile.ssn'");
    expect(found[0]).toContain(message);
  });

  it.each([
    ["a list's item definition", { tags: { type: "list", schema: { type: "string", allowed_read_roles: ["hr"] } } }, "tags[]"],
    ["a tuple's item", { pair: { type: "list", items: [{ type: "string", allowed_read_roles: ["hr"] }] } }, "pair (items 0)"],
    ["an anyof definition", { value: { anyof: [{ type: "string", allowed_write_roles: ["hr"] }] } }, "value (anyof 0)"],
    ["valuesrules", { scores: { type: "dict", valuesrules: { type: "integer", allowed_read_roles: ["hr"] } } }, "scores (valuesrules)"],
    ["a dict inside an anyof", { value: { anyof: [{ type: "dict", schema: { a: hidden } }] } }, "value.a"],
  ])("refuses a rule in %s, where it cannot be enforced", (_what, schema, label) => {
    const found = problems({ schema: schema as Schema });
    expect(found).toEqual([expect.stringContaining(`field '${label}'`)]);
    expect(found[0]).toContain("is not enforced here");
  });

  it("refuses what would reveal a field to those who may not read it: the id, a lookup, the url, the default sort", () => {
    expect(problems({ schema: { _id: { type: "objectid", allowed_read_roles: ["hr"] } } })).toEqual([expect.stringContaining("field '_id' is the id field")]);
    expect(problems({ schema: { ssn: hidden }, additional_lookup: { url: 'regex("[0-9]+")', field: "ssn" } })).toEqual([
      expect.stringContaining("field 'ssn' has read rules and cannot be the additional_lookup field"),
    ]);
    expect(problems({ schema: { profile: { type: "dict", schema: { ssn: hidden } } }, datasource: { default_sort: [["profile.ssn", 1]] } })).toEqual([
      expect.stringContaining("field 'profile.ssn' has read rules and cannot be in default_sort"),
    ]);
    expect(problems({ schema: { profile: { type: "dict", schema: { ssn: hidden } } }, default_sort: "-profile" })).toEqual([
      expect.stringContaining("field 'profile' has read rules and cannot be in default_sort"),
    ]);
    expect(problems({ schema: { owner: hidden }, url: 'people/<regex("[a-z]+"):owner>/notes' })).toEqual([
      expect.stringContaining("field 'owner' has read rules and cannot be a value in the resource's url"),
    ]);
  });

  it("refuses them with transparent_schema_rules too, which only forgives unknown Cerberus rules", () => {
    expect(() => createHandler({ DOMAIN: { people: { transparent_schema_rules: true, schema: { ssn: { type: "string", allowed_read_roles: [] } } } } })).toThrow(/field 'ssn'/);
  });
});
