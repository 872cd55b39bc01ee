// DBRef values (Eve's `dbref` type): sent as `{"$col" or "$ref": …, "$id": …}`, checked for
// existence like any data_relation, rendered as `{"$ref": …, "$id": …}`, linked to the item they
// name and embeddable. Eve's scenario: tests/methods/post.py test_dbref_post_referential_integrity.
import { ObjectId } from "bson";
import { afterAll, describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi } from "../support/api.ts";

const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: {
    contacts: { schema: { name: { type: "string" } } },
    invoices: {
      schema: {
        persondbref: { type: "dbref", data_relation: { resource: "contacts", embeddable: true } },
        people: { type: "list", schema: { type: "dbref", data_relation: { resource: "contacts", embeddable: true } } },
        note: { type: "string" },
      },
    },
  },
};

describe("DBRef fields", () => {
  const api = testApi(settings);
  afterAll(() => api.close());

  async function contact(name: string): Promise<string> {
    return (await json(await api.post("/contacts", { name })))._id as string;
  }

  it("refuse a reference to a document that does not exist, in Eve's words", async () => {
    const unknown = new ObjectId().toHexString();
    const response = await api.post("/invoices", { persondbref: { $col: "contacts", $id: unknown } });
    expect(response.status).toBe(422);
    expect((await json(response))._issues).toEqual({ persondbref: `value '${unknown}' must exist in resource 'contacts', field '_id'.` });
    const listed = await api.post("/invoices", { people: [{ $ref: "contacts", $id: unknown }] });
    expect(listed.status).toBe(422);
  });

  it("are stored, rendered as $ref/$id, linked and embedded", async () => {
    const id = await contact("ann");
    const created = await api.post("/invoices", { persondbref: { $col: "contacts", $id: id }, people: [{ $ref: "contacts", $id: id }] });
    expect(created.status).toBe(201);
    const invoice = (await json(created))._id as string;

    const body = await json(await api.get(`/invoices/${invoice}`));
    expect(body.persondbref).toEqual({ $ref: "contacts", $id: id });
    expect(body.people).toEqual([{ $ref: "contacts", $id: id }]);
    expect(body._links).toMatchObject({ related: { persondbref: { title: "Contact", href: `contacts/${id}` }, people: [{ href: `contacts/${id}` }] } });

    const embedded = await json(await api.get(`/invoices/${invoice}?embedded={"persondbref":1,"people":1}`));
    expect(embedded.persondbref).toMatchObject({ _id: id, name: "ann" });
    expect(embedded.people).toMatchObject([{ _id: id, name: "ann" }]);
  });

  it("are not anything with $ keys: other operator-like keys are still refused", async () => {
    const id = await contact("bob");
    const response = await api.post("/invoices", { persondbref: { $ref: "contacts", $id: id, $where: "1" } });
    expect(response.status).toBe(422);
  });
});
