// Cursor paging (PAGINATION_CURSOR, docs/paging.md) over HTTP, on every driver and runtime: a
// client that follows `_links.next` sees the collection exactly once in the sort's order,
// whatever is written meanwhile; every page holds the where, the datasource filter and soft
// delete; cursors are opaque, bound to their resource, sort and where, and refused when bent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schema, Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const schema: Schema = {
  name: { type: "string" },
  age: { type: "integer" },
  nickname: { type: "string" },
  born: { type: "datetime" },
  team: { type: "integer" },
  secret: { type: "string" },
};

const settings: Settings = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  PAGINATION_CURSOR: true,
  PAGINATION_LIMIT: 100,
  PAGINATION_DEFAULT: 7,
  DOMAIN: {
    people: { schema, datasource: { default_sort: [["age", -1]] }, mongo_indexes: { by_team: [["team", 1], ["name", 1]] } },
    teamone: { schema, datasource: { source: "people", filter: { team: 1 } } },
    others: { schema },
    fragile: { schema, soft_delete: true },
    plain: { pagination_cursor: false, schema },
    odd: { schema },
    oddpaged: { pagination_cursor: false, schema, datasource: { source: "odd" } },
  },
};

/** 30 people: ties on age and team, a nickname on some only, a birth date each. */
interface Person {
  name: string;
  age: number;
  team: number;
  born: string;
  secret: string;
  nickname?: string;
}

function population(count = 30): Person[] {
  return Array.from({ length: count }, (_, i) => {
    const person: Person = { name: `p${String(i).padStart(2, "0")}`, age: (i * 7) % 5, team: i % 3, born: new Date(Date.UTC(1950 + ((i * 11) % 40), 0, 1)).toUTCString(), secret: `TOPSECRET${i}` };
    if (i % 4 === 0) person.nickname = `n${(i * 13) % 10}`;
    return person;
  });
}

/** The names of every page reached by following `next` from `path`, and the pages' sizes. */
async function walk(api: TestApi, path: string, link: "next" | "prev" = "next"): Promise<{ names: string[]; pages: number[] }> {
  const names: string[] = [];
  const pages: number[] = [];
  let next: string | undefined = path;
  for (let i = 0; next !== undefined && i < 100; i++) {
    const response = await api.get(next.startsWith("/") ? next : `/${next}`);
    const body = await json(response);
    expect(response.status, JSON.stringify(body)).toBe(200);
    const page = body._items.map((item: { name: string }) => item.name);
    names.push(...(link === "next" ? page : [...page].reverse()));
    pages.push(page.length);
    next = body._links[link]?.href;
  }
  return { names, pages };
}

const names = async (response: Response): Promise<string[]> => (await json(response))._items.map((item: { name: string }) => item.name);

describe("cursor paging", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = testApi(settings);
    for (const resource of ["people", "others", "fragile", "plain"]) expect((await api.post(`/${resource}`, population())).status).toBe(201);
  });
  afterAll(() => api.close());

  const sorts = ["", "sort=-age,name", "sort=age,-team", "sort=nickname", "sort=-nickname", "sort=born", "sort=-_id", "sort=team,name"];
  for (const sort of sorts) {
    it(`walks the whole collection once, in the order of one sorted read (${sort || "default_sort"})`, async () => {
      const whole = await names(await api.get(`/people?max_results=100&${sort}`));
      expect(whole).toHaveLength(30);
      const walked = await walk(api, `/people?max_results=4&${sort}`);
      expect(walked.names).toEqual(whole);
      expect(walked.pages).toEqual([4, 4, 4, 4, 4, 4, 4, 2]);
      // Backwards from the last page by `prev`.
      const first = await json(await api.get(`/people?max_results=4&${sort}`));
      expect((await walk(api, first._links.last.href, "prev")).names).toEqual([...whole].reverse());
    });
  }

  it("orders as MongoDB does: ties by _id, a missing field before any value", async () => {
    const people = population();
    const byAgeThenName = [...people].sort((a, b) => a.age - b.age || (a.name < b.name ? 1 : -1)).map((p) => p.name);
    expect(await names(await api.get("/people?max_results=100&sort=age,-name"))).toEqual(byAgeThenName);
    const nicknames = await json(await api.get("/people?max_results=100&sort=nickname"));
    const nicknamed = nicknames._items.map((item: { nickname?: string }) => item.nickname ?? null);
    expect(nicknamed.slice(0, 22)).toEqual(Array(22).fill(null));
    expect(nicknamed.slice(22)).toEqual([...nicknamed.slice(22)].sort());
  });

  it("shows a document that existed throughout exactly once, whatever is inserted and deleted during the walk", async () => {
    expect((await api.post("/others", [{ name: "zz", age: 9 }])).status).toBe(201);
    const start = await json(await api.get("/others?sort=age,name&max_results=5"));
    const seen: string[] = start._items.map((item: { name: string }) => item.name);
    const gone = new Set<string>();
    let next: string | undefined = start._links.next?.href;
    for (let round = 0; next; round++) {
      // New people before, at and after the position, and two old ones removed ahead of it.
      expect((await api.post("/others", [{ name: `new${round}a`, age: 0 }, { name: `new${round}b`, age: 2 }, { name: `new${round}c`, age: 4 }])).status).toBe(201);
      if (round === 1) {
        for (const name of ["p28", "p14"]) {
          const item = await json(await api.get(`/others?where=${encodeURIComponent(JSON.stringify({ name }))}`));
          expect((await api.delete(`/others/${item._items[0]._id}`, { "If-Match": item._items[0]._etag })).status).toBe(204);
          gone.add(name);
        }
      }
      const page = await json(await api.get(`/${next}`));
      seen.push(...page._items.map((item: { name: string }) => item.name));
      next = page._links.next?.href;
    }
    const throughout = population().map((p) => p.name).filter((name) => !gone.has(name)).concat("zz");
    expect(new Set(seen).size).toBe(seen.length);
    for (const name of throughout) expect(seen).toContain(name);
    const order = [...population(), { name: "zz", age: 9 } as Person].sort((a, b) => a.age - b.age || (a.name < b.name ? -1 : 1)).map((p) => p.name);
    expect(seen.filter((name) => throughout.includes(name))).toEqual(order.filter((name) => throughout.includes(name)));
  });

  it("links that ask what the request asked when the where holds %, &, # or +", async () => {
    const odd = ["x&y", "a+b", "h#1", "50%41", "plain"];
    expect((await api.post("/odd", odd.flatMap((name) => [{ name, age: 1 }, { name, age: 2 }]))).status).toBe(201);
    const where = encodeURIComponent(JSON.stringify({ name: { $in: odd.slice(0, 4) } }));
    const expected = odd.slice(0, 4).sort().flatMap((name) => [name, name]);
    for (const resource of ["odd", "oddpaged"]) {
      const walked = await walk(api, `/${resource}?where=${where}&max_results=3&sort=name,age&note=${encodeURIComponent("a&b")}`);
      expect(walked.names).toEqual(expected);
      expect(walked.pages).toEqual([3, 3, 2]);
    }
  });

  it("holds the where, the datasource filter and soft delete on every page", async () => {
    const where = encodeURIComponent(JSON.stringify({ team: 2 }));
    const walked = await walk(api, `/people?where=${where}&max_results=3&sort=name`);
    expect(walked.names).toEqual(population().filter((p) => p.team === 2).map((p) => p.name));
    const filtered = await walk(api, "/teamone?max_results=3&sort=name");
    expect(filtered.names).toEqual(population().filter((p) => p.team === 1).map((p) => p.name));
    const doomed = await json(await api.get("/fragile?sort=name&max_results=3"));
    for (const item of doomed._items) expect((await api.delete(`/fragile/${item._id}`, { "If-Match": item._etag })).status).toBe(204);
    const live = await walk(api, "/fragile?sort=name&max_results=4");
    expect(live.names).toEqual(population().map((p) => p.name).slice(3));
  });

  it("gives next, prev and last cursors, the page number only where the read was by page number, and carries the query", async () => {
    const first = await json(await api.get("/people?max_results=5&sort=name&where={\"age\":{\"$gte\":0}}&pretty"));
    expect(first._meta).toEqual({ page: 1, max_results: 5, total: 30, count: "exact" });
    expect(Object.keys(first._links)).toEqual(["parent", "self", "next", "last"]);
    expect(first._links.next.href).toMatch(/^people\?max_results=5&where=\{"age":\{"\$gte":0\}\}&sort=name&cursor=[A-Za-z0-9_-]+&pretty=$/);
    const second = await json(await api.get(`/${first._links.next.href}`));
    expect(second._meta).toEqual({ max_results: 5, total: 30, count: "exact" });
    expect(Object.keys(second._links)).toEqual(["parent", "self", "next", "last", "prev"]);
    expect(second._links.self.href).toBe(first._links.next.href);
    expect(await names(await api.get(`/${second._links.prev.href}`))).toEqual(first._items.map((i: { name: string }) => i.name));
    // A page number still reads as Eve's, and its links go on by cursor.
    const third = await json(await api.get("/people?max_results=5&sort=name&page=3"));
    expect(third._meta.page).toBe(3);
    expect(await names(await api.get(`/${third._links.next.href}`))).toEqual(population().map((p) => p.name).slice(15, 20));
  });

  it("keeps projection, embedding, HATEOAS, XML, JSONP and Last-Modified working on cursor pages", async () => {
    const projected = await json(await api.get(`/people?sort=age&max_results=4&projection=${encodeURIComponent('{"name": 1}')}`));
    expect(Object.keys(projected._items[0]).sort()).toEqual(["_created", "_etag", "_id", "_links", "_updated", "name"]);
    const walked = await walk(api, `/people?sort=age&max_results=4&projection=${encodeURIComponent('{"name": 1}')}`);
    expect(walked.names).toEqual(await names(await api.get("/people?sort=age&max_results=100")));
    const xml = await api.get("/people?max_results=2&sort=name", { Accept: "application/xml" });
    expect(xml.headers.get("content-type")).toMatch(/xml/);
    expect(await xml.text()).toMatch(/<link rel="next" href="people\?max_results=2&amp;sort=name&amp;cursor=[A-Za-z0-9_-]+" title="next page"/);
    const page = await api.get("/people?max_results=2&sort=name");
    expect(page.headers.get("last-modified")).toBeTruthy();
    expect(page.headers.get("x-total-count")).toBe("30");
  });

  it("pages by a field the projection excludes, and leaves the stored documents whole", async () => {
    // The embedded store handed out its own documents and the field was cut from them for good.
    const excluding = `/people?sort=-nickname,name&max_results=4&projection=${encodeURIComponent('{"nickname": 0}')}`;
    const before = await names(await api.get("/people?sort=-nickname,name&max_results=100"));
    for (let round = 0; round < 2; round++) expect((await walk(api, excluding)).names).toEqual(before);
    const all = await json(await api.get("/people?max_results=100"));
    expect(all._items.filter((person: Person) => person.nickname !== undefined)).toHaveLength(8);
    expect(await names(await api.get("/people?sort=-nickname,name&max_results=100"))).toEqual(before);
  });

  it("never shows a sorted value in the cursor", async () => {
    const page = await json(await api.get("/people?sort=secret&max_results=2"));
    const token = new URLSearchParams(page._links.next.href.split("?")[1]).get("cursor")!;
    const bytes = atob(token.replaceAll("-", "+").replaceAll("_", "/") + "=".repeat((4 - (token.length % 4)) % 4));
    expect(bytes).not.toContain("TOPSECRET");
    expect(bytes).not.toContain(page._items[1]._id);
  });

  it("refuses a cursor that is garbage, truncated, altered, oversize, or made for another resource, sort or where", async () => {
    const first = await json(await api.get("/people?max_results=3&sort=name"));
    const href: string = first._links.next.href;
    const token = new URLSearchParams(href.split("?")[1]).get("cursor")!;
    const flipped = token.slice(0, 20) + (token[20] === "A" ? "B" : "A") + token.slice(21);
    const bent = [
      `/people?sort=name&cursor=garbage!`,
      `/people?sort=name&cursor=${token.slice(0, token.length - 6)}`,
      `/people?sort=name&cursor=${flipped}`,
      `/people?sort=name&cursor=${"A".repeat(5000)}`,
      `/people?sort=-name&cursor=${token}`,
      `/people?sort=name&where={"team":1}&cursor=${token}`,
      `/others?sort=name&cursor=${token}`,
      `/people?sort=name&cursor=${token}&page=2`,
    ];
    for (const path of bent) {
      const response = await api.get(path);
      expect(response.status, path).toBe(400);
      const body = await json(response);
      expect(body._status).toBe("ERR");
      expect(body._error.code).toBe(400);
    }
    // The same cursor with the same sort and where, in another order of parameters: fine.
    expect((await api.get(`/people?cursor=${token}&max_results=3&sort=name`)).status).toBe(200);
  });

  it("refuses a max_results that is not a whole number from 1, and cuts a large one to the limit", async () => {
    for (const value of ["-1", "0", "abc", "2.5", "1e3", "0000"]) {
      expect((await api.get(`/people?max_results=${value}`)).status, value).toBe(400);
    }
    // As the refusal says: any larger whole number is cut, however many digits it has.
    for (const value of ["500", "9007199254740993", "99999999999999999999"]) {
      expect((await json(await api.get(`/people?max_results=${value}`)))._meta.max_results, value).toBe(100);
    }
  });

  it("leaves a resource without cursors as Eve: a cursor parameter is just carried along", async () => {
    const body = await json(await api.get("/plain?max_results=5&cursor=whatever"));
    expect(body._meta).toEqual({ page: 1, max_results: 5, total: 30 });
    expect(body._links.next.href).toBe("plain?max_results=5&page=2&cursor=whatever");
  });
});

describe("cursor paging: the secret", () => {
  const secret = "a secret of sixteen characters or more";
  const seeded = async (extra: Partial<Settings>) => {
    const api = testApi({ ...settings, ...extra });
    expect((await api.post("/people", population(6))).status).toBe(201);
    return api;
  };

  it("opens cursors sealed by an instance with the same secret, and by the previous one of a rotation, not others'", async () => {
    const one = await seeded({ PAGINATION_CURSOR_SECRET: secret });
    const rotated = await seeded({ PAGINATION_CURSOR_SECRET: ["a newer secret, also long enough", secret] });
    const other = await seeded({ PAGINATION_CURSOR_SECRET: "someone else's secret entirely" });
    const unset = await seeded({});
    try {
      const next = (await json(await one.get("/people?max_results=2&sort=name")))._links.next.href;
      expect(await names(await one.get(`/${next}`))).toEqual(["p02", "p03"]);
      // Another database: the same names, other ids, so p01's own tie may come first.
      const opened = await rotated.get(`/${next}`);
      expect(opened.status).toBe(200);
      expect(await names(opened)).toContain("p02");
      expect((await other.get(`/${next}`)).status).toBe(400);
      expect((await unset.get(`/${next}`)).status).toBe(400);
      // What the rotated instance seals, the old one cannot open.
      const newer = (await json(await rotated.get("/people?max_results=2&sort=name")))._links.next.href;
      expect((await one.get(`/${newer}`)).status).toBe(400);
    } finally {
      await Promise.all([one, rotated, other, unset].map((api) => api.close()));
    }
  });
});
