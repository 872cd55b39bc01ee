// What writes answer. With BANDWIDTH_SAVER off, POST, PATCH and PUT answer with the document as a
// read shows it: a field the datasource projection hides is not sent back, and `?embedded=` is
// honoured (Eve's build_response_document; tests/methods/post.py test_post_projection_is_honored).
// A bulk POST with items that are no documents fails item by item, in Cerberus' words, as Eve
// does; and an empty list of references has no `related` link.
import { afterAll, describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi } from "../support/api.ts";

const domain: Settings["DOMAIN"] = {
  owners: { schema: { name: { type: "string" } } },
  accounts: {
    datasource: { projection: { secret: 0 } },
    schema: {
      name: { type: "string" },
      secret: { type: "string" },
      owner: { type: "objectid", data_relation: { resource: "owners", embeddable: true } },
      friends: { type: "list", schema: { type: "objectid", data_relation: { resource: "owners" } } },
    },
  },
};

const settings = (bandwidthSaver: boolean): Settings => ({
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "PUT"],
  BANDWIDTH_SAVER: bandwidthSaver,
  DOMAIN: domain,
});

describe("write responses with BANDWIDTH_SAVER off", () => {
  const api = testApi(settings(false));
  afterAll(() => api.close());

  it("POST, PATCH and PUT never send back a field the datasource projection hides", async () => {
    const created = await api.post("/accounts", { name: "ann", secret: "s3cret" });
    expect(created.status).toBe(201);
    const body = await json(created);
    expect(body).toMatchObject({ name: "ann", _status: "OK" });
    expect(body).not.toHaveProperty("secret");

    const patched = await api.patch(`/accounts/${body._id as string}`, { name: "ann b" }, { "If-Match": body._etag as string });
    expect(patched.status).toBe(200);
    const patchedBody = await json(patched);
    expect(patchedBody).toMatchObject({ name: "ann b" });
    expect(patchedBody).not.toHaveProperty("secret");

    const put = await api.put(`/accounts/${body._id as string}`, { name: "ann c", secret: "other" }, { "If-Match": patchedBody._etag as string });
    expect(put.status).toBe(200);
    const putBody = await json(put);
    expect(putBody).toMatchObject({ name: "ann c" });
    expect(putBody).not.toHaveProperty("secret");
    // Stored all the same: a client may ask for it explicitly.
    expect(await json(await api.get(`/accounts/${body._id as string}?projection={"secret":1}`))).toMatchObject({ secret: "other" });
  });

  it("embed what ?embedded= asks for", async () => {
    const owner = (await json(await api.post("/owners", { name: "olga" })))._id as string;
    const created = await json(await api.post(`/accounts?embedded={"owner":1}`, { name: "bo", owner }));
    expect(created.owner).toMatchObject({ _id: owner, name: "olga" });
    const patched = await json(await api.patch(`/accounts/${created._id as string}?embedded={"owner":1}`, { name: "bob" }, { "If-Match": created._etag as string }));
    expect(patched.owner).toMatchObject({ _id: owner, name: "olga" });
    const plain = await json(await api.patch(`/accounts/${created._id as string}`, { name: "bobby" }, { "If-Match": patched._etag as string }));
    expect(plain.owner).toBe(owner);
  });

  it("an empty list of references has no related link; a filled one has", async () => {
    const owner = (await json(await api.post("/owners", { name: "pia" })))._id as string;
    const empty = await json(await api.post("/accounts", { name: "e", friends: [] }));
    expect(empty._links).not.toHaveProperty("related");
    const filled = await json(await api.post("/accounts", { name: "f", friends: [owner] }));
    expect(filled._links).toMatchObject({ related: { friends: [{ href: `owners/${owner}` }] } });
  });
});

describe("write responses with BANDWIDTH_SAVER on", () => {
  const api = testApi(settings(true));
  afterAll(() => api.close());

  it("carry the meta fields only, whatever ?embedded= asks", async () => {
    const owner = (await json(await api.post("/owners", { name: "olga" })))._id as string;
    const body = await json(await api.post(`/accounts?embedded={"owner":1}`, { name: "ann", secret: "x", owner }));
    expect(Object.keys(body).sort()).toEqual(["_created", "_etag", "_id", "_links", "_status", "_updated"]);
  });
});

describe("a bulk POST with items that are no documents", () => {
  const api = testApi({ ...settings(true), DOMAIN: { ...domain, accounts: { ...domain.accounts, bulk_enabled: true } } });
  afterAll(() => api.close());

  it("is 422 with one issue per item, and stores nothing", async () => {
    const response = await api.post("/accounts", [1, "two", { name: "ok" }, null, { name: 5 }]);
    expect(response.status).toBe(422);
    const body = await json(response);
    expect(body._status).toBe("ERR");
    expect(body._items).toEqual([
      { _status: "ERR", _issues: { "validation exception": "'1' is not a document, must be a dict" } },
      { _status: "ERR", _issues: { "validation exception": "'two' is not a document, must be a dict" } },
      { _status: "OK" },
      { _status: "ERR", _issues: { "validation exception": "document is missing" } },
      { _status: "ERR", _issues: { name: "must be of string type" } },
    ]);
    expect(body._error).toEqual({ code: 422, message: "Insertion failure: 4 document(s) contain(s) error(s)" });
    expect(await json(await api.get("/accounts"))).toMatchObject({ _meta: { total: 0 } });
  });
});
