import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import { peopleSettings } from "../support/settings.ts";

const NAMES = ["Adams", "Baker", "Clark", "Davis", "Evans"];

describe("a projection", () => {
  // A resource without a schema sends the client's projection to the store as it is.
  const api = testApi({ DOMAIN: { notes: { allow_unknown: true, schema: {}, resource_methods: ["GET", "POST"] } } });
  afterAll(() => api.close());

  it("of a nested field leaves the stored document whole", async () => {
    const { _id } = await json(await api.post("/notes", { place: { city: "Rome", zip: "00100" } }));
    const without = encodeURIComponent('{"place.city": 0}');
    expect((await json(await api.get(`/notes/${_id}?projection=${without}`))).place).toEqual({ zip: "00100" });
    expect((await json(await api.get(`/notes?projection=${without}`)))._items[0].place).toEqual({ zip: "00100" });
    expect((await json(await api.get(`/notes/${_id}`))).place).toEqual({ city: "Rome", zip: "00100" });
    expect((await json(await api.get("/notes")))._items[0].place).toEqual({ city: "Rome", zip: "00100" });
  });
});

describe("collection GET", () => {
  const api = testApi(peopleSettings({ PAGINATION_DEFAULT: 2, PAGINATION_LIMIT: 3 }));
  const ids: string[] = [];
  beforeAll(async () => {
    for (const [i, lastname] of NAMES.entries()) {
      const body = await json(await api.post("/people", { lastname, age: i * 10, born: `Mon, 0${i + 1} Jan 1990 00:00:00 GMT`, location: { city: i % 2 ? "Rome" : "Oslo" } }));
      ids.push(body._id);
    }
  });
  afterAll(() => api.close());

  it("paginates with _meta, X-Total-Count and links", async () => {
    const response = await api.get("/people?page=2");
    const body = await json(response);
    expect(response.headers.get("x-total-count")).toBe("5");
    expect(body._meta).toEqual({ page: 2, max_results: 2, total: 5 });
    expect(body._items.map((d: any) => d.lastname)).toEqual(["Clark", "Davis"]);
    expect(body._links).toEqual({
      parent: { title: "home", href: "/" },
      self: { title: "people", href: "people?page=2" },
      next: { title: "next page", href: "people?page=3" },
      last: { title: "last page", href: "people?page=3" },
      prev: { title: "previous page", href: "people" },
    });
    expect(response.headers.get("last-modified")).not.toBeNull();
  });

  it("clamps max_results to PAGINATION_LIMIT", async () => {
    expect((await json(await api.get("/people?max_results=100")))._meta.max_results).toBe(3);
  });

  it("filters with Mongo JSON and Python syntax, converting dates and ids", async () => {
    const mongo = await json(await api.get(`/people?where=${encodeURIComponent('{"age": {"$gte": 30}}')}`));
    expect(mongo._items.map((d: any) => d.lastname)).toEqual(["Davis", "Evans"]);
    const python = await json(await api.get(`/people?where=${encodeURIComponent('age >= 30 and lastname == "Evans"')}`));
    expect(python._items.map((d: any) => d.lastname)).toEqual(["Evans"]);
    const dates = await json(await api.get(`/people?where=${encodeURIComponent('{"born": {"$lt": "Wed, 03 Jan 1990 00:00:00 GMT"}}')}`));
    expect(dates._items.map((d: any) => d.lastname)).toEqual(["Adams", "Baker"]);
    const byId = await json(await api.get(`/people?where=${encodeURIComponent(JSON.stringify({ _id: ids[1] }))}`));
    expect(byId._items.map((d: any) => d.lastname)).toEqual(["Baker"]);
    const nested = await json(await api.get(`/people?where=${encodeURIComponent('{"location.city": "Rome"}')}`));
    expect(nested._meta.total).toBe(2);
  });

  it("sorts with -field and the list syntax", async () => {
    const desc = await json(await api.get("/people?sort=-lastname&max_results=3"));
    expect(desc._items.map((d: any) => d.lastname)).toEqual(["Evans", "Davis", "Clark"]);
    const list = await json(await api.get(`/people?sort=${encodeURIComponent('[("age", -1)]')}&max_results=1`));
    expect(list._items[0].lastname).toBe("Evans");
  });

  it("projects inclusively and exclusively, always keeping meta fields", async () => {
    const included = await json(await api.get(`/people?projection=${encodeURIComponent('{"lastname": 1}')}&max_results=1`));
    expect(Object.keys(included._items[0]).sort()).toEqual(["_created", "_etag", "_id", "_links", "_updated", "lastname"]);
    const excluded = await json(await api.get(`/people?projection=${encodeURIComponent('{"location": 0}')}&max_results=1`));
    expect(excluded._items[0].location).toBeUndefined();
    expect(excluded._items[0].lastname).toBe("Adams");
    expect((await api.get(`/people?projection=${encodeURIComponent('{"lastname": 1, "age": 0}')}`)).status).toBe(400);
  });

  it("answers malformed queries with 400", async () => {
    for (const query of ["where=bad", "where={'a':1}", 'sort="lastname"', `sort=${encodeURIComponent("[['a',1]]")}`, "projection=nope", `where=${encodeURIComponent('{"lastname": {"$regex": "A"}}')}`]) {
      const response = await api.get(`/people?${query}`);
      expect(response.status, query).toBe(400);
      expect((await json(response))._status).toBe("ERR");
    }
  });

  it("ignores a page or max_results that is not a positive number, as Eve does", async () => {
    const body = await json(await api.get("/people?page=abc&max_results=-1"));
    expect(body._meta).toEqual({ page: 1, max_results: 2, total: 5 });
  });

  it("reads a missing collection or database as empty", async () => {
    const empty = testApi({ DOMAIN: { ghosts: { schema: { name: { type: "string" } } } } });
    const response = await empty.get("/ghosts");
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ _items: [], _meta: { total: 0 } });
    await empty.close();
  });
});

describe("item GET and conditional requests", () => {
  const api = testApi(peopleSettings({ CACHE_CONTROL: "max-age=20", CACHE_EXPIRES: 20 }));
  afterAll(() => api.close());

  it("sends ETag and Last-Modified, and 304s matching validators", async () => {
    const created = await json(await api.post("/people", { lastname: "Cached" }));
    const response = await api.get(`/people/${created._id}`);
    expect(response.status).toBe(200);
    const etag = response.headers.get("etag")!;
    const lastModified = response.headers.get("last-modified")!;
    expect(etag).toBe(`"${created._etag}"`);
    expect(response.headers.get("cache-control")).toBe("max-age=20");
    expect(response.headers.get("expires")).not.toBeNull();
    const body = await json(response);
    expect(body._links).toEqual({
      self: { title: "person", href: `people/${created._id}` },
      parent: { title: "home", href: "/" },
      collection: { title: "people", href: "people" },
    });

    const notModified = await api.get(`/people/${created._id}`, { "If-None-Match": etag });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe("");
    expect((await api.get(`/people/${created._id}`, { "If-Modified-Since": lastModified })).status).toBe(304);
    expect((await api.get(`/people/${created._id}`, { "If-Modified-Since": "Mon, 01 Jan 2001 00:00:00 GMT" })).status).toBe(200);
    expect((await api.get(`/people/${created._id}`, { "If-None-Match": '"other"' })).status).toBe(200);
    // Both validators must agree.
    expect((await api.get(`/people/${created._id}`, { "If-None-Match": etag, "If-Modified-Since": "Mon, 01 Jan 2001 00:00:00 GMT" })).status).toBe(200);
  });
});

describe("HATEOAS off", () => {
  const api = testApi(peopleSettings({ HATEOAS: false }));
  afterAll(() => api.close());

  it("omits every _links", async () => {
    const created = await json(await api.post("/people", { lastname: "Linkless" }));
    expect(created._links).toBeUndefined();
    const list = await json(await api.get("/people"));
    expect(list._links).toBeUndefined();
    expect(list._items[0]._links).toBeUndefined();
    expect(await json(await api.get("/"))).toEqual({});
  });
});

describe("malformed operator operands", () => {
  const api = testApi(peopleSettings());
  afterAll(() => api.close());

  it("are refused with 400 on every driver, never reaching the database", async () => {
    await api.post("/people", { lastname: "Operand" });
    for (const where of ['{"_id": {"$in": "x"}}', '{"lastname": {"$nin": 5}}', '{"role": {"$all": "author"}}', '{"$or": {"lastname": "x"}}', '{"$and": "x"}']) {
      const response = await api.get(`/people?where=${encodeURIComponent(where)}`);
      expect(response.status, where).toBe(400);
    }
    expect((await api.get(`/people?where=${encodeURIComponent('{"lastname": {"$in": ["Operand"]}}')}`)).headers.get("x-total-count")).toBe("1");
  });
});

describe("OPTIMIZE_PAGINATION_FOR_SPEED", () => {
  const api = testApi(peopleSettings({ OPTIMIZE_PAGINATION_FOR_SPEED: true, PAGINATION_DEFAULT: 2 }));
  afterAll(() => api.close());

  it("skips the count: no total, no X-Total-Count, no last link, next always offered", async () => {
    await api.post("/people", [{ lastname: "Fast1" }, { lastname: "Fast2" }, { lastname: "Fast3" }]);
    const response = await api.get("/people?page=2");
    expect(response.headers.get("x-total-count")).toBeNull();
    const body = await json(response);
    expect(body._meta).toEqual({ page: 2, max_results: 2 });
    expect(body._items.map((d: any) => d.lastname)).toEqual(["Fast3"]);
    expect(body._links.last).toBeUndefined();
    expect(body._links.next).toEqual({ title: "next page", href: "people?page=3" });
    expect(body._links.prev).toEqual({ title: "previous page", href: "people" });
  });
});
