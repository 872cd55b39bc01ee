// Validation details as Eve 2.3.1 has them (tests/methods/post.py: test_post_valueschema_dict,
// test_post_keyschema_dict, test_post_referential_integrity_list).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";

describe("valueschema / keysrules and list data_relation", () => {
  const api = testApi({
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      contacts: {
        schema: {
          ref: { type: "string" },
          valueschema_dict: { type: "dict", valueschema: { type: "integer" } },
          keyschema_dict: { type: "dict", keyschema: { type: "string", regex: "[a-z]+" } },
          values_dict: { type: "dict", valuesrules: { type: "boolean" } },
        },
      },
      invoices: { schema: { invoicing_contacts: { type: "list", data_relation: { resource: "contacts" } } } },
    },
  });
  let known: string;
  const unknown = "0123456789abcdef01234567";
  beforeAll(async () => {
    known = (await json(await api.post("/contacts", { ref: "x" })))._id;
  });
  afterAll(() => api.close());

  it("enforces valueschema types without coercing '1' to an integer", async () => {
    const refused = await api.post("/contacts", { valueschema_dict: { k1: "1" } });
    expect(refused.status).toBe(422);
    expect((await json(refused))._issues).toEqual({ valueschema_dict: { k1: "must be of integer type" } });
    const bools = await api.post("/contacts", { values_dict: { k1: "true" } });
    expect(bools.status).toBe(422);
    expect((await json(bools))._issues).toEqual({ values_dict: { k1: "must be of boolean type" } });
    expect((await api.post("/contacts", { valueschema_dict: { k1: 1 }, values_dict: { k1: true } })).status).toBe(201);
  });

  it("checks keys against keyschema", async () => {
    expect((await api.post("/contacts", { keyschema_dict: { aaa: 1 } })).status).toBe(201);
    const refused = await api.post("/contacts", { keyschema_dict: { AAA: "1" } });
    expect(refused.status).toBe(422);
    expect((await json(refused))._issues).toEqual({ keyschema_dict: { AAA: "value does not match regex '[a-z]+'" } });
  });

  it("reports only the missing ids of a list data_relation, in Eve's wording", async () => {
    const refused = await api.post("/invoices", { invoicing_contacts: [known, unknown] });
    expect(refused.status).toBe(422);
    expect((await json(refused))._issues).toEqual({ invoicing_contacts: `value '${unknown}' must exist in resource 'contacts', field '_id'.` });
    expect((await api.post("/invoices", { invoicing_contacts: [known, known] })).status).toBe(201);
  });
});
