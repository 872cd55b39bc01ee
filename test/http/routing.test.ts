import { afterAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import { peopleSettings } from "../support/settings.ts";

describe("routing", () => {
  const api = testApi(peopleSettings({ DOMAIN: { ...peopleSettings().DOMAIN, readonly: {} } }));
  afterAll(() => api.close());

  it("serves the home page with one child link per resource", async () => {
    const response = await api.get("/");
    expect(response.status).toBe(200);
    expect((await json(response))._links.child).toEqual([
      { href: "people", title: "people" },
      { href: "works", title: "works" },
      { href: "readonly", title: "readonly" },
    ]);
  });

  it("answers an unknown path with the 404 envelope", async () => {
    const response = await api.get("/nothing");
    expect(response.status).toBe(404);
    expect(await json(response)).toEqual({
      _status: "ERR",
      _error: { code: 404, message: "The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again." },
    });
  });

  it("treats an id that is not 24 hex as an unknown path, not a server error", async () => {
    expect((await api.get("/works/not-an-id")).status).toBe(404);
    expect((await api.get("/works/%ZZ")).status).toBe(404);
  });

  it("refuses a disallowed method with 405 and Allow", async () => {
    const response = await api.post("/people/5f0000000000000000000000", {});
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("DELETE, GET, HEAD, OPTIONS, PATCH, PUT");
    expect((await json(response))._error).toEqual({ code: 405, message: "The method is not allowed for the requested URL." });
  });

  it("makes an empty resource definition read-only", async () => {
    expect((await api.get("/readonly")).status).toBe(200);
    const response = await api.post("/readonly", { a: 1 });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it("keeps additional_lookup read-only", async () => {
    const created = await json(await api.post("/people", { lastname: "Lookup" }));
    expect((await api.get("/people/Lookup")).status).toBe(200);
    const response = await api.patch("/people/Lookup", { firstname: "x" }, { "If-Match": created._etag });
    expect(response.status).toBe(405);
  });

  it("answers HEAD like GET without a body", async () => {
    const response = await api.fetch("/people", { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("x-total-count")).not.toBeNull();
    expect(await response.text()).toBe("");
  });

  it("answers OPTIONS with the allowed methods", async () => {
    const response = await api.fetch("/people", { method: "OPTIONS" });
    expect(response.status).toBe(200);
    expect(response.headers.get("allow")).toBe("DELETE, GET, HEAD, OPTIONS, POST");
  });

  it("accepts a trailing slash", async () => {
    expect((await api.get("/people/")).status).toBe(200);
  });
});

describe("URL_PREFIX and API_VERSION", () => {
  const api = testApi(peopleSettings({ URL_PREFIX: "api", API_VERSION: "v1" }));
  afterAll(() => api.close());

  it("serves everything under /<prefix>/<version> with links relative to it", async () => {
    expect((await api.get("/people")).status).toBe(404);
    const created = await api.post("/api/v1/people", { lastname: "Prefixed" });
    expect(created.status).toBe(201);
    const body = await json(created);
    expect(body._links.self.href).toBe(`people/${body._id}`);
    expect(created.headers.get("location")).toBe(`http://everest.test/api/v1/people/${body._id}`);
    const list = await json(await api.get("/api/v1/people"));
    expect(list._links.self).toEqual({ title: "people", href: "people" });
    expect((await api.get("/api/v1/")).status).toBe(200);
  });
});

describe("resource url", () => {
  const api = testApi({
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: { accounts: { url: "admin/accounts", schema: { name: { type: "string" } } }, "üñï": { schema: { name: { type: "string" } } } },
  });
  afterAll(() => api.close());

  it("may contain slashes", async () => {
    const created = await json(await api.post("/admin/accounts", { name: "a" }));
    expect(created._links.self.href).toBe(`admin/accounts/${created._id}`);
    expect((await api.get(`/admin/accounts/${created._id}`)).status).toBe(200);
    expect((await json(await api.get("/")))._links.child).toEqual([
      { href: "admin/accounts", title: "admin/accounts" },
      { href: "üñï", title: "üñï" },
    ]);
  });

  it("may hold characters a request's path percent-encodes", async () => {
    const created = await api.post("/%C3%BC%C3%B1%C3%AF", { name: "a" });
    expect(created.status).toBe(201);
    const id = (await json(created))._id;
    expect((await api.get(`/%C3%BC%C3%B1%C3%AF/${id}`)).status).toBe(200);
    expect((await json(await api.get("/%C3%BC%C3%B1%C3%AF")))._meta.total).toBe(1);
  });

  // Werkzeug routes the decoded path (PATH_INFO), and Eve's links follow request.path, decoded
  // too: a client that escapes more than it must reaches the same resource, and reads its name.
  it("is matched and linked decoded, whatever a request escapes", async () => {
    const created = await api.post("/%c3%bc%c3%b1%c3%af", { name: "b" });
    expect(created.status).toBe(201);
    const body = await json(created);
    expect(body._links.self.href).toBe(`üñï/${body._id}`);
    expect(created.headers.get("location")).toBe(`http://everest.test/%C3%BC%C3%B1%C3%AF/${body._id}`);
    expect((await json(await api.get("/%C3%BC%C3%B1%C3%AF")))._links.self).toEqual({ title: "üñï", href: "üñï" });
    const escaped = `%${body._id.charCodeAt(0).toString(16)}${body._id.slice(1)}`;
    const item = await api.get(`/%C3%BC%C3%B1%C3%AF/${escaped}`);
    expect(item.status).toBe(200);
    expect((await json(item))._id).toBe(body._id);
    expect((await api.get(`/%C3%BC%C3%B1%C3%AF%2F${body._id}`)).status).toBe(200);
    const accounts = await api.get("/admin%2Faccount%73");
    expect(accounts.status).toBe(200);
    expect((await json(accounts))._links.self).toEqual({ title: "admin/accounts", href: "admin/accounts" });
  });

  // Werkzeug routes `2024%2Fintro` as `2024/intro`; Eve's resource_link() then cut the path at
  // its last slash, leaving `pages/2024` in every link. The item's own value is what is cut.
  it("links an item whose lookup value holds a slash under its resource", async () => {
    const pages = testApi({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { pages: { item_lookup_field: "slug", item_url: String.raw`regex("[\w/]+")`, schema: { slug: { type: "string" } } } } });
    try {
      const { _id } = await json(await pages.post("/pages", { slug: "2024/intro" }));
      for (const path of ["/pages/2024/intro", "/pages/2024%2Fintro"]) {
        const page = await json(await pages.get(path));
        expect(page._links.collection, path).toEqual({ title: "pages", href: "pages" });
        expect(page._links.self.href, path).toBe(`pages/${_id}`);
      }
    } finally {
      await pages.close();
    }
  });

  it("answers 404 to escapes that decode to no resource, or to no UTF-8", async () => {
    for (const path of ["/%FF", "/%C3", "/%C3%BC%C3%B1%C3", "/admin%252Faccounts", "/admin/accounts%"]) {
      const response = await api.get(path);
      expect(response.status, path).toBe(404);
      expect((await json(response))._error.code).toBe(404);
    }
  });
});

describe("X-HTTP-Method-Override", () => {
  const api = testApi(peopleSettings());
  afterAll(() => api.close());

  it("turns a POST into a PATCH", async () => {
    const created = await json(await api.post("/people", { lastname: "Override" }));
    const response = await api.post(`/people/${created._id}`, { firstname: "Over" }, { "X-HTTP-Method-Override": "PATCH", "If-Match": created._etag });
    expect(response.status).toBe(200);
    expect((await json(await api.get(`/people/${created._id}`))).firstname).toBe("Over");
  });

  it("is ignored on a GET, so a safe request never changes data", async () => {
    const created = await json(await api.post("/people", { lastname: "Safe" }));
    const response = await api.fetch(`/people/${created._id}`, { headers: { "X-HTTP-Method-Override": "DELETE", "If-Match": created._etag } });
    expect(response.status).toBe(200);
    expect((await api.get(`/people/${created._id}`)).status).toBe(200);
  });

  // Served as a HEAD, a POST's answer would announce a body it does not carry: the next response
  // on the connection would be read as this one's body.
  it("cannot make a POST a HEAD", async () => {
    const created = await json(await api.post("/people", { lastname: "Headless" }));
    const response = await api.post(`/people/${created._id}`, {}, { "X-HTTP-Method-Override": "head" });
    expect(response.status).toBe(400);
    expect((await json(response))._error.message).toBe("X-HTTP-Method-Override cannot be HEAD: send a HEAD request");
  });
});
