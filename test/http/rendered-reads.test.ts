// Reads answered from the JSON kept per stored version (src/render/kept-json.ts) answer exactly what a
// fresh rendering would: after every kind of write, and for every request that shapes the body
// some other way (projection, ?pretty, XML, JSONP, a hook, another path to the same document).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import { peopleSettings } from "../support/settings.ts";

const api = testApi(peopleSettings({ JSONP_ARGUMENT: "callback", RENDERERS: ["json", "xml"] }));
afterAll(() => api.close());

async function create(lastname: string, extra: Record<string, unknown> = {}): Promise<{ _id: string; _etag: string }> {
  const response = await api.post("/people", { lastname, firstname: "Ann", ...extra });
  expect(response.status).toBe(201);
  return json(response);
}

/** The item twice (the second from what the first kept) and the page that lists it. */
async function readTwice(path: string): Promise<[string, string]> {
  const first = await (await api.get(path)).text();
  const second = await (await api.get(path)).text();
  return [first, second];
}

const listed = async (lastname: string) =>
  (await json(await api.get(`/people?where=${encodeURIComponent(JSON.stringify({ lastname }))}`)))._items[0];

describe("reads kept as JSON per stored version", () => {
  it("answer a read again with the same bytes, ETag and Last-Modified", async () => {
    const { _id } = await create("Kept");
    const [first, second] = await readTwice(`/people/${_id}`);
    expect(second).toBe(first);
    const [a, b] = [await api.get(`/people/${_id}`), await api.get(`/people/${_id}`)];
    expect(b.headers.get("etag")).toBe(a.headers.get("etag"));
    expect(b.headers.get("last-modified")).toBe(a.headers.get("last-modified"));
    expect(b.headers.get("content-length")).toBe(String(first.length));
    const [pageA, pageB] = await readTwice("/people?max_results=50");
    expect(pageB).toBe(pageA);
  });

  it("show a PATCH, a PUT and a DELETE at once, in the item and in pages", async () => {
    const { _id } = await create("Changing");
    await readTwice(`/people/${_id}`);
    await readTwice("/people?max_results=50");
    const etag = (await api.get(`/people/${_id}`)).headers.get("etag")!;
    expect((await api.patch(`/people/${_id}`, { firstname: "Bea" }, { "If-Match": etag })).status).toBe(200);
    const patched = await api.get(`/people/${_id}`);
    expect((await json(patched)).firstname).toBe("Bea");
    expect(patched.headers.get("etag")).not.toBe(etag);
    expect((await listed("Changing")).firstname).toBe("Bea");

    const replaced = await api.put(`/people/${_id}`, { lastname: "Changing", firstname: "Cy" }, { "If-Match": patched.headers.get("etag")! });
    expect(replaced.status).toBe(200);
    expect((await json(await api.get(`/people/${_id}`))).firstname).toBe("Cy");
    expect((await listed("Changing")).firstname).toBe("Cy");

    const current = (await api.get(`/people/${_id}`)).headers.get("etag")!;
    expect((await api.delete(`/people/${_id}`, { "If-Match": current })).status).toBe(204);
    expect((await api.get(`/people/${_id}`)).status).toBe(404);
    expect(await listed("Changing")).toBeUndefined();
  });

  it("answer a page again only while it lists the same versions and total", async () => {
    const [before] = await readTwice("/people?max_results=50");
    const { _id } = await create("Paged");
    const [after] = await readTwice("/people?max_results=50");
    expect(JSON.parse(after)._meta.total).toBe(JSON.parse(before)._meta.total + 1);
    expect(JSON.parse(after)._items.map((item: { _id: string }) => item._id)).toContain(_id);
    const etag = (await api.get(`/people/${_id}`)).headers.get("etag")!;
    await api.patch(`/people/${_id}`, { firstname: "Pat" }, { "If-Match": etag });
    const patched = JSON.parse(await (await api.get("/people?max_results=50")).text());
    expect(patched._meta.total).toBe(JSON.parse(after)._meta.total);
    expect(patched._items.find((item: { _id: string }) => item._id === _id).firstname).toBe("Pat");
    // The same page asked another way: its own links.
    const other = JSON.parse(await (await api.get("/people?max_results=50&page=1")).text());
    expect(other._links.self.href).toBe("people?max_results=50");
    expect(other._items).toEqual(patched._items);
  });

  it("answer 304 for the ETag and the date they were made with", async () => {
    const { _id } = await create("Cached");
    await readTwice(`/people/${_id}`);
    const response = await api.get(`/people/${_id}`);
    const etag = response.headers.get("etag")!;
    expect((await api.get(`/people/${_id}`, { "If-None-Match": etag })).status).toBe(304);
    expect((await api.get(`/people/${_id}`, { "If-None-Match": '"other"' })).status).toBe(200);
    expect((await api.get(`/people/${_id}`, { "If-Modified-Since": response.headers.get("last-modified")! })).status).toBe(304);
    expect((await api.get(`/people/${_id}`, { "If-Modified-Since": "Mon, 01 Jan 1990 00:00:00 GMT" })).status).toBe(200);
  });

  it("leave a projection, ?pretty, XML and JSONP to their own rendering", async () => {
    const { _id } = await create("Shaped", { age: 40 });
    const [plain] = await readTwice(`/people/${_id}`);
    await readTwice("/people?max_results=50");

    const projected = await json(await api.get(`/people/${_id}?projection=${encodeURIComponent('{"age": 1}')}`));
    expect(projected.age).toBe(40);
    expect(projected.firstname).toBeUndefined();
    const projectedPage = await json(await api.get(`/people?max_results=50&projection=${encodeURIComponent('{"age": 1}')}`));
    expect(projectedPage._items.every((item: Record<string, unknown>) => item.firstname === undefined)).toBe(true);

    const pretty = await (await api.get(`/people/${_id}?pretty`)).text();
    expect(pretty).toContain('\n    "lastname": "Shaped"');
    expect(JSON.parse(pretty)).toEqual(JSON.parse(plain));

    const xml = await api.get(`/people/${_id}`, { Accept: "application/xml" });
    expect(xml.headers.get("content-type")).toMatch(/^application\/xml/);
    expect(await xml.text()).toContain("<lastname>Shaped</lastname>");

    expect(await (await api.get(`/people/${_id}?callback=take`)).text()).toBe(`take(${plain})`);
    const page = await (await api.get("/people?max_results=50")).text();
    expect(await (await api.get("/people?max_results=50&callback=take")).text()).toBe(`take(${page.replace("people?max_results=50", "people?max_results=50&callback=take")})`);
  });

  it("answer HEAD with the length of the body a GET sends", async () => {
    const { _id } = await create("Headed");
    const [body] = await readTwice(`/people/${_id}`);
    const head = await api.fetch(`/people/${_id}`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(body.length));
    expect(await head.text()).toBe("");
    const [page] = await readTwice("/people?max_results=50");
    expect((await api.fetch("/people?max_results=50", { method: "HEAD" })).headers.get("content-length")).toBe(String(page.length));
  });

  it("show the same document through another lookup with that request's own links", async () => {
    const { _id } = await create("Looked");
    const [byId] = await readTwice(`/people/${_id}`);
    const [byName] = await readTwice("/people/Looked");
    expect(byName).toBe(byId);
    expect(JSON.parse(byId)._links.collection).toEqual({ title: "people", href: "people" });
  });
});

describe("reads kept as JSON, on sub-resources", () => {
  const schema = { number: { type: "integer" }, account: { type: "integer" } } as const;
  const nested = testApi({
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: {
      invoices: { schema },
      owned: { url: 'accounts/<regex("[0-9]+"):account>/invoices', datasource: { source: "invoices" }, schema },
    },
  });
  let id = "";
  beforeAll(async () => {
    id = (await json(await nested.post("/invoices", { number: 7, account: 7 })))._id;
  });
  afterAll(() => nested.close());

  it("link a document read through two resources over one collection each by its own URL", async () => {
    await nested.get(`/invoices/${id}`);
    const direct = await json(await nested.get(`/invoices/${id}`));
    await nested.get(`/accounts/7/invoices/${id}`);
    const owned = await json(await nested.get(`/accounts/7/invoices/${id}`));
    expect(direct._links.self.href).toBe(`invoices/${id}`);
    expect(owned._links.self.href).toBe(`accounts/7/invoices/${id}`);
    expect(owned._links.collection.href).toBe("accounts/7/invoices");
    expect((await json(await nested.get(`/invoices/${id}`)))._links.self.href).toBe(`invoices/${id}`);
    expect((await json(await nested.get("/accounts/7/invoices")))._items[0]._links.self.href).toBe(`accounts/7/invoices/${id}`);
    expect((await json(await nested.get("/invoices")))._items[0]._links.self.href).toBe(`invoices/${id}`);
  });

  it("link it under each way its path is written", async () => {
    // 007 and 7 are the same account: the same document, with the links of the path asked.
    await nested.get(`/accounts/7/invoices/${id}`);
    const padded = await json(await nested.get(`/accounts/007/invoices/${id}`));
    expect(padded._links.self.href).toBe(`accounts/007/invoices/${id}`);
    expect((await json(await nested.get("/accounts/007/invoices")))._items[0]._links.self.href).toBe(`accounts/007/invoices/${id}`);
    expect((await json(await nested.get(`/accounts/7/invoices/${id}`)))._links.self.href).toBe(`accounts/7/invoices/${id}`);
  });
});

describe("reads kept as JSON, with soft delete", () => {
  const soft = testApi(peopleSettings({ SOFT_DELETE: true }));
  afterAll(() => soft.close());

  it("answer a soft-deleted document as deleted, and list it as deleted where asked", async () => {
    const { _id } = await json(await soft.post("/people", { lastname: "Soft" }));
    await soft.get(`/people/${_id}`);
    await soft.get("/people?show_deleted");
    const etag = (await soft.get(`/people/${_id}`)).headers.get("etag")!;
    expect((await soft.delete(`/people/${_id}`, { "If-Match": etag })).status).toBe(204);
    const gone = await soft.get(`/people/${_id}`);
    expect(gone.status).toBe(404);
    expect((await json(gone))._deleted).toBe(true);
    expect((await soft.get(`/people/${_id}`)).status).toBe(404);
    expect((await json(await soft.get("/people?show_deleted")))._items[0]._deleted).toBe(true);
    expect((await json(await soft.get("/people")))._items).toEqual([]);
  });
});

describe("reads kept as JSON, and hooks", () => {
  // Its API made in the test: the test runs in process only, so a runtime's run starts no server for it.
  it("run an on_fetched hook subscribed after the document was kept", async () => {
    const hooked = testApi(peopleSettings());
    try {
      const { _id } = await json(await hooked.post("/people", { lastname: "Hooked" }));
      await hooked.get(`/people/${_id}`);
      await hooked.get("/people");
      expect((await json(await hooked.get(`/people/${_id}`))).seen).toBeUndefined();
      hooked.handler.app.on("on_fetched_item_people", (document) => {
        document.seen = true;
      });
      hooked.handler.app.on("on_fetched_resource_people", (response) => {
        for (const item of response._items as Array<Record<string, unknown>>) item.seen = true;
      });
      expect((await json(await hooked.get(`/people/${_id}`))).seen).toBe(true);
      expect((await json(await hooked.get("/people")))._items[0].seen).toBe(true);
    } finally {
      await hooked.close();
    }
  });
});
