// Sub-resources: named regex segments of a resource url are conditions on every operation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import type { Settings } from "../../src/settings/types.ts";

const HEX = '[a-f0-9]{24}';

function settings(): Settings {
  return {
    RESOURCE_METHODS: ["GET", "POST", "DELETE"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    DOMAIN: {
      people: { schema: { name: { type: "string" } } },
      invoices: {
        url: `people/<regex("${HEX}"):person>/invoices`,
        schema: {
          number: { type: "integer" },
          person: { type: "objectid", data_relation: { resource: "people" } },
        },
      },
      // A segment typed integer by the schema, and one the schema does not declare.
      pages: {
        url: 'books/<regex("[0-9]+"):book>/shelves/<regex("[a-z]+"):shelf>/pages',
        schema: { book: { type: "integer" }, text: { type: "string" } },
      },
    },
  };
}

describe("sub-resources", () => {
  const api = testApi(settings());
  let ada = "";
  let bob = "";
  beforeAll(async () => {
    ada = (await json(await api.post("/people", { name: "Ada" })))._id;
    bob = (await json(await api.post("/people", { name: "Bob" })))._id;
  });
  afterAll(() => api.close());

  const invoices = (person: string) => `/people/${person}/invoices`;

  // Eve's config.URLS (tests/config.py test_url_helpers: `users/<person>/invoices`); Eve keeps
  // only the last name of a url with several (docs/decisions.md §5).
  it("lists each sub-resource on the home page by its url with the segments' names, not their regexes, in href", async () => {
    expect((await json(await api.get("/")))._links.child).toEqual([
      { href: "people", title: "people" },
      // The title is resource_title, which defaults to the url as declared, as in Eve.
      { href: "people/<person>/invoices", title: `people/<regex("${HEX}"):person>/invoices` },
      { href: "books/<book>/shelves/<shelf>/pages", title: 'books/<regex("[0-9]+"):book>/shelves/<regex("[a-z]+"):shelf>/pages' },
    ]);
  });

  it("POST stores the segment as the field, converted by its type, over what the body says", async () => {
    const created = await api.post(invoices(ada), [{ number: 1 }, { number: 2, person: bob }]);
    expect(created.status).toBe(201);
    const body = await json(created);
    expect(body._items[0]._links.self.href).toBe(`people/${ada}/invoices/${body._items[0]._id}`);
    expect(created.headers.get("location")).toBe(`http://everest.test/people/${ada}/invoices/${body._items[0]._id}`);
    await api.post(invoices(bob), { number: 3 });
    // Stored as an ObjectId: a where on the field with the typed value finds them.
    const byWhere = await json(await api.get(`${invoices(ada)}?where=${encodeURIComponent(JSON.stringify({ person: ada }))}`));
    expect(byWhere._items.map((d: any) => d.number).sort()).toEqual([1, 2]);
  });

  it("GET of the collection sees only the path's documents, combined with where", async () => {
    const body = await json(await api.get(invoices(ada)));
    expect(body._meta.total).toBe(2);
    expect(body._items.every((d: any) => d.person === ada)).toBe(true);
    expect(body._links.self).toEqual({ title: `people/<regex("${HEX}"):person>/invoices`, href: `people/${ada}/invoices` });
    expect(body._items[0]._links.self.href).toMatch(new RegExp(`^people/${ada}/invoices/${HEX}$`));
    const filtered = await json(await api.get(`${invoices(ada)}?where=${encodeURIComponent('{"number": 3}')}`));
    expect(filtered._items).toEqual([]);
    expect((await json(await api.get(invoices("0".repeat(24)))))._items).toEqual([]);
  });

  it("item operations need the item to match the path too", async () => {
    const bobs = (await json(await api.get(invoices(bob))))._items[0];
    const wrong = `${invoices(ada)}/${bobs._id}`;
    expect((await api.get(wrong)).status).toBe(404);
    expect((await api.patch(wrong, { number: 30 }, { "If-Match": bobs._etag })).status).toBe(404);
    expect((await api.delete(wrong, { "If-Match": bobs._etag })).status).toBe(404);

    const right = `${invoices(bob)}/${bobs._id}`;
    const item = await json(await api.get(right));
    expect(item._links.self.href).toBe(right.slice(1));
    expect(item._links.collection.href).toBe(invoices(bob).slice(1));
    const patched = await api.patch(right, { number: 30 }, { "If-Match": bobs._etag });
    expect(patched.status).toBe(200);
    const put = await api.put(right, { number: 31 }, { "If-Match": (await json(patched))._etag });
    expect(put.status).toBe(200);
    // PUT keeps the document under its path: the segment is written back.
    const replaced = await json(await api.get(right));
    expect(replaced).toMatchObject({ number: 31, person: bob });
    // So does PATCH: a segment it sets is the URL's, and the document stays where it was sent.
    const moved = await api.patch(right, { number: 32, person: ada }, { "If-Match": replaced._etag });
    expect(moved.status).toBe(200);
    expect(await json(await api.get(right))).toMatchObject({ number: 32, person: bob });
  });

  it("DELETE of the sub-collection removes only the path's documents", async () => {
    expect((await api.delete(invoices(ada))).status).toBe(204);
    expect((await json(await api.get(invoices(ada))))._items).toEqual([]);
    expect((await json(await api.get(invoices(bob))))._meta.total).toBe(1);
    expect((await api.delete(invoices(ada))).status).toBe(204);
    expect((await json(await api.get(invoices(bob))))._meta.total).toBe(1);
  });

  it("a path that does not match the segment's regex is not routed", async () => {
    expect((await api.get("/people/not-an-id/invoices")).status).toBe(404);
  });

  it("converts each segment by its schema type; an undeclared one is stored unvalidated, not served", async () => {
    const created = await api.post("/books/7/shelves/top/pages", { text: "one" });
    expect(created.status).toBe(201);
    const id = (await json(created))._id;
    await api.post("/books/8/shelves/top/pages", { text: "two" });
    const page = await json(await api.get(`/books/7/shelves/top/pages/${id}`));
    expect(page).toMatchObject({ book: 7, text: "one" });
    expect(page).not.toHaveProperty("shelf");
    // Still a condition: the same page under another shelf does not exist.
    expect((await api.get(`/books/7/shelves/low/pages/${id}`)).status).toBe(404);
    expect((await json(await api.get("/books/7/shelves/top/pages")))._items.map((d: any) => d.text)).toEqual(["one"]);
    expect((await json(await api.get("/books/7/shelves/low/pages")))._items).toEqual([]);
    expect((await json(await api.get(`/books/7/shelves/top/pages?where=${encodeURIComponent('{"book": 7}')}`)))._meta.total).toBe(1);
    // A PATCH that sets one segment keeps it as the URL says, and adds no other (the undeclared shelf).
    const patched = await api.patch(`/books/7/shelves/top/pages/${id}`, { book: 8, text: "uno" }, { "If-Match": page._etag });
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect(await json(await api.get(`/books/7/shelves/top/pages/${id}`))).toMatchObject({ book: 7, text: "uno" });
  });
});

// Update operators and writes by filter (docs/updates.md) keep a document under its URL too.
describe("sub-resources with update operators and PATCH by filter", () => {
  const api = testApi({
    DOMAIN: {
      people: { resource_methods: ["GET", "POST"], schema: { name: { type: "string" } } },
      invoices: {
        url: `people/<regex("${HEX}"):person>/invoices`,
        resource_methods: ["GET", "POST", "PATCH"],
        item_methods: ["GET", "PATCH"],
        update_operators: ["$set", "$inc"],
        patch_by_filter: true,
        schema: { number: { type: "integer" }, person: { type: "objectid" } },
      },
    },
  });
  afterAll(() => api.close());
  const invoices = (person: string) => `/people/${person}/invoices`;

  it("sets a segment field back to the URL's value, and refuses an operator on it", async () => {
    const ada = (await json(await api.post("/people", { name: "Ada" })))._id;
    const bob = (await json(await api.post("/people", { name: "Bob" })))._id;
    const created = await json(await api.post(invoices(ada), { number: 1 }));
    const item = `${invoices(ada)}/${created._id}`;

    // Operators with a plain field: the plain segment field is the URL's.
    const mixed = await api.patch(item, { $inc: { number: 1 }, person: bob }, { "If-Match": created._etag });
    expect(mixed.status, await mixed.clone().text()).toBe(200);
    const after = await json(await api.get(item));
    expect(after).toMatchObject({ number: 2, person: ada });

    // An operator on the segment field is refused whole: nothing changes.
    const moved = await api.patch(item, { $set: { person: bob }, $inc: { number: 1 } }, { "If-Match": after._etag });
    expect(moved.status).toBe(422);
    expect((await json(moved))._issues).toEqual({ $set: { person: "field is read-only" } });
    expect(await json(await api.get(item))).toMatchObject({ number: 2, person: ada });

    // By filter: the plain segment field is the URL's, for every document matched.
    await api.post(invoices(ada), { number: 5 });
    const byFilter = await api.patch(`${invoices(ada)}?where=${encodeURIComponent('{"number": {"$gte": 2}}')}`, { person: bob, number: 9 });
    expect(byFilter.status, await byFilter.clone().text()).toBe(200);
    expect((await json(byFilter))._meta).toEqual({ matched: 2, updated: 2 });
    const listed = await json(await api.get(invoices(ada)));
    expect(listed._items.map((d: any) => [d.number, d.person])).toEqual([[9, ada], [9, ada]]);
    expect((await json(await api.get(invoices(bob))))._items).toEqual([]);
    const refused = await api.patch(`${invoices(ada)}?where=${encodeURIComponent('{"number": 9}')}`, { $set: { person: bob } });
    expect(refused.status).toBe(422);
    expect((await json(await api.get(invoices(ada))))._meta.total).toBe(2);
  });
});
