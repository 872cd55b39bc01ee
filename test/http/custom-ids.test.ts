// A resource's own id field (Eve's `id_field`, here `sku`) names its documents everywhere: item
// URLs, self links, Location, POST answers, PUT-upserts, and the references other resources hold
// (a data_relation without `field` refers to the referenced resource's id field). And ids typed
// string or integer by the schema find the documents they created. Eve's scenarios:
// tests/methods/get.py test_get_custom_idfield, test_get_subresource_with_custom_idfield,
// tests/methods/put.py test_put_custom_idfield, test_put_creates_unexisting_document_with_url_as_id.
import { ObjectId } from "bson";
import { afterAll, describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi } from "../support/api.ts";

const products = {
  id_field: "sku",
  item_lookup_field: "sku",
  item_url: 'regex("[A-Z]+")',
  schema: {
    sku: { type: "string", maxlength: 16 },
    title: { type: "string", minlength: 4, maxlength: 32 },
    parent_product: { type: "string", data_relation: { resource: "products" } },
  },
} as const;

const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    products,
    child_products: { ...products, url: 'products/<regex("[A-Z]+"):parent_product>/children', datasource: { source: "products" } },
    orders: {
      schema: {
        product: { type: "string", data_relation: { resource: "products", embeddable: true } },
        lines: { type: "list", schema: { type: "string", data_relation: { resource: "products" } } },
      },
    },
    people: { schema: { name: { type: "string" } } },
    tags: { item_url: 'regex("[a-z-]+")', schema: { _id: { type: "string" }, label: { type: "string" } } },
    notes: { item_url: 'regex("[^/]+")', schema: { _id: { type: "string" }, n: { type: "integer" } } },
    counters: { item_url: 'regex("[0-9]+")', schema: { _id: { type: "integer" }, value: { type: "integer" } } },
  },
};

describe("a resource's own id field", () => {
  const api = testApi(settings);
  afterAll(() => api.close());

  it("names the created document in Location, the POST answer and every self link", async () => {
    const created = await api.post("/products", { sku: "ABC", title: "Hypercube" });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe("http://everest.test/products/ABC");
    const body = await json(created);
    expect(body).toMatchObject({ _status: "OK", sku: "ABC", _links: { self: { title: "Product", href: "products/ABC" } } });

    const item = await api.get("/products/ABC");
    expect(item.status).toBe(200);
    expect(await json(item)).toMatchObject({ sku: "ABC", title: "Hypercube", _links: { self: { href: "products/ABC" } } });

    const list = await json(await api.get("/products"));
    const items = list._items as Array<Record<string, unknown>>;
    expect(items.map((i) => (i._links as { self: { href: string } }).self.href)).toContain("products/ABC");
  });

  it("PUT to a missing id creates the document there; PATCH and DELETE find it by that id", async () => {
    const put = await api.put("/products/FOOBAR", { title: "Awesome Hypercube" });
    expect(put.status).toBe(201);
    expect(put.headers.get("location")).toBe("http://everest.test/products/FOOBAR");
    const etag = (await json(put))._etag as string;
    expect(await json(await api.get("/products/FOOBAR"))).toMatchObject({ sku: "FOOBAR", title: "Awesome Hypercube" });

    const patched = await api.patch("/products/FOOBAR", { title: "Hyper Cube" }, { "If-Match": etag });
    expect(patched.status).toBe(200);
    const patchedBody = await json(patched);
    expect(patchedBody).toMatchObject({ sku: "FOOBAR", _links: { self: { href: "products/FOOBAR" } } });
    // The id field is immutable, as `_id` is.
    expect((await api.patch("/products/FOOBAR", { sku: "OTHER" }, { "If-Match": patchedBody._etag as string })).status).toBe(400);

    const current = (await json(await api.get("/products/FOOBAR")))._etag as string;
    expect((await api.delete("/products/FOOBAR", { "If-Match": current })).status).toBe(204);
    expect((await api.get("/products/FOOBAR")).status).toBe(404);
  });

  it("is what a data_relation without `field` refers to: checked, linked and embedded by sku", async () => {
    await api.post("/products", { sku: "REF", title: "Referenced" });
    const missing = await api.post("/orders", { product: "NOPE" });
    expect(missing.status).toBe(422);
    expect((await json(missing))._issues).toEqual({ product: "value 'NOPE' must exist in resource 'products', field 'sku'." });

    const order = await api.post("/orders", { product: "REF", lines: ["REF"] });
    expect(order.status).toBe(201);
    const body = await json(order);
    expect(body._links).toMatchObject({ related: { product: { title: "Product", href: "products/REF" }, lines: [{ href: "products/REF" }] } });

    const embedded = await json(await api.get(`/orders/${body._id as string}?embedded={"product":1}`));
    expect(embedded.product).toMatchObject({ sku: "REF", title: "Referenced" });
  });

  it("serves a sub-resource keyed by the parent's id field", async () => {
    await api.post("/products", { sku: "PARENT", title: "Parent product" });
    await api.post("/products", { sku: "BAZ", title: "Child product", parent_product: "PARENT" });
    const children = await json(await api.get("/products/PARENT/children"));
    const items = children._items as Array<Record<string, unknown>>;
    expect(items.map((i) => i.sku)).toEqual(["BAZ"]);
    expect(items[0]!.parent_product).toBe("PARENT");
  });
});

describe("ids typed by the schema", () => {
  const api = testApi(settings);
  afterAll(() => api.close());

  it("a string _id finds, changes and deletes the document it created", async () => {
    const created = await api.post("/tags", { _id: "red-ish", label: "Red" });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe("http://everest.test/tags/red-ish");
    const item = await api.get("/tags/red-ish");
    expect(item.status).toBe(200);
    const etag = (await json(item))._etag as string;
    expect((await api.patch("/tags/red-ish", { label: "Reddish" }, { "If-Match": etag })).status).toBe(200);
    expect(await json(await api.get("/tags/red-ish"))).toMatchObject({ _id: "red-ish", label: "Reddish" });
  });

  it("a Location names the document created even when its id holds ?, # or %", async () => {
    await api.post("/notes", [{ _id: "r2", n: 1 }, { _id: "pB", n: 2 }]);
    for (const [id, n] of [["r2?z", 3], ["p%42", 4], ["h#1", 5], ["a b", 6]] as const) {
      const created = await api.post("/notes", { _id: id, n });
      expect(created.status).toBe(201);
      const location = created.headers.get("location")!;
      expect(location).toBe(`http://everest.test/notes/${encodeURIComponent(id)}`);
      expect(await json(await api.get(location.slice("http://everest.test".length)))).toMatchObject({ _id: id, n });
    }
  });

  it("an integer _id finds the document it created, and PUT creates one at an integer URL", async () => {
    expect((await api.post("/counters", { _id: 5, value: 1 })).status).toBe(201);
    expect(await json(await api.get("/counters/5"))).toMatchObject({ _id: 5, value: 1 });
    const put = await api.put("/counters/7", { value: 2 });
    expect(put.status).toBe(201);
    expect(await json(await api.get("/counters/7"))).toMatchObject({ _id: 7, value: 2 });
    expect(await json(await api.get('/counters?where={"_id":7}'))).toMatchObject({ _meta: { total: 1 } });
  });

  it("PUT to a missing id with another _id in the body creates at the URL's id", async () => {
    const id = new ObjectId().toHexString();
    const other = new ObjectId().toHexString();
    const put = await api.put(`/people/${id}`, { name: "ann", _id: other });
    expect(put.status).toBe(201);
    expect((await json(put))._id).toBe(id);
    expect((await api.get(`/people/${id}`)).status).toBe(200);
    expect((await api.get(`/people/${other}`)).status).toBe(404);
  });
});

// Eve casts a URL's 24 hex digits to an ObjectId on the id field whatever the schema types it, so
// a resource that declares `_id` a string still finds what it created without one (the store
// named it by an ObjectId): tests/versioning.py TestVersioningWithCustomIdField::test_getitem.
// Werkzeug's named converters, as Eve settings write them (`'item_url': 'int'`).
describe("item_url as a named converter", () => {
  const api = testApi({
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: {
      numbered: { item_url: "int", schema: { _id: { type: "integer" }, name: { type: "string" } } },
      keyed: { item_url: "uuid", schema: { _id: { type: "string" }, name: { type: "string" } } },
    },
  });
  afterAll(() => api.close());

  it("int and uuid route items by Werkzeug's patterns", async () => {
    expect((await api.post("/numbered", { _id: 12, name: "twelve" })).status).toBe(201);
    const item = await api.get("/numbered/12");
    expect(item.status).toBe(200);
    expect(await json(item)).toMatchObject({ _id: 12, name: "twelve", _links: { self: { href: "numbered/12" } } });
    expect((await api.get("/numbered/x12")).status).toBe(404);
    const uuid = "48c00ee9-4dbe-413f-9fc3-d5f12a91de1c";
    expect((await api.post("/keyed", { _id: uuid, name: "u" })).status).toBe(201);
    expect((await api.get(`/keyed/${uuid}`)).status).toBe(200);
    expect((await api.get("/keyed/48c00ee9")).status).toBe(404);
  });
});

describe("an _id typed string on documents the store named", () => {
  const api = testApi({
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PUT"],
    DOMAIN: {
      contacts: {
        url: "arbitraryurl",
        versioning: true,
        datasource: { filter: { username: { $exists: false } } },
        schema: { _id: { type: "string" }, ref: { type: "string", minlength: 25, maxlength: 25, required: true, unique: true }, prog: { type: "integer" } },
      },
    },
  });
  afterAll(() => api.close());
  const first = { ref: "ref value 1..............", prog: 123 };
  const second = { ref: "ref value 2..............", prog: 456 };

  it("finds, replaces and serves each version of it", async () => {
    const created = await json(await api.post("/arbitraryurl", first));
    expect(created._id).toMatch(/^[0-9a-f]{24}$/);
    const url = `/arbitraryurl/${created._id}`;
    const put = await api.put(url, second, { "If-Match": created._etag });
    expect(put.status).toBe(200);
    expect(await json(put)).toMatchObject({ _status: "OK", _version: 2 });

    const v1 = await api.get(`${url}?version=1`);
    expect(v1.status).toBe(200);
    const one = await json(v1);
    expect(one).toMatchObject({ ...first, _version: 1, _latest_version: 2 });
    expect(one._links.self.href).toBe(`arbitraryurl/${created._id}?version=1`);
    expect(one._links.collection.href).toBe(`arbitraryurl/${created._id}?version=all`);
    expect(one._links.parent.href).toBe(`arbitraryurl/${created._id}`);
    expect(await json(await api.get(`${url}?version=2`))).toMatchObject({ ...second, _version: 2, _latest_version: 2 });
    expect(await json(await api.get(url))).toMatchObject({ ...second, _version: 2, _latest_version: 2 });
  });

  it("still finds a document created with a string of 24 hex digits as its id", async () => {
    const id = new ObjectId().toHexString();
    expect((await api.post("/arbitraryurl", { _id: id, ref: "ref value 3.............." })).status).toBe(201);
    expect(await json(await api.get(`/arbitraryurl/${id}`))).toMatchObject({ _id: id, ref: "ref value 3.............." });
  });
});

// Eve's put_internal validates the body as sent, the id field with it: a schema that requires
// its id field (here `sku`) is met by a replacement that repeats it.
describe("a required id field of the schema", () => {
  const api = testApi({
    ITEM_METHODS: ["GET", "PUT"],
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: { skus: { ...products, schema: { title: products.schema.title, sku: { type: "string", required: true, unique: true } } } },
  });
  afterAll(() => api.close());

  it("is met by a PUT that repeats it, and missing from one that leaves it out", async () => {
    const created = await json(await api.post("/skus", { sku: "BBB", title: "first" }));
    const put = await api.put("/skus/BBB", { sku: "BBB", title: "second" }, { "If-Match": created._etag });
    expect(put.status).toBe(200);
    const replaced = await json(put);
    expect(await json(await api.get("/skus/BBB"))).toMatchObject({ sku: "BBB", title: "second" });
    const without = await api.put("/skus/BBB", { title: "third" }, { "If-Match": replaced._etag });
    expect(without.status).toBe(422);
    expect(await json(without)).toEqual({ _status: "ERR", _issues: { sku: "required field" } });
    expect((await api.put("/skus/BBB", { sku: "CCC", title: "third" }, { "If-Match": replaced._etag })).status).toBe(400);
    expect(await json(await api.get("/skus/BBB"))).toMatchObject({ title: "second" });
  });
});
