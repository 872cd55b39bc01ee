// Hostile input, each path refused cleanly (4xx, nothing stored, nothing leaked): JSONP callback
// names, operator injection through `where`, prototype pollution through every parsed input,
// user regexes, deep nesting, absurd paging, CR/LF aimed at response headers.
import { afterEach, describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const people = {
  resource_methods: ["GET", "POST"],
  item_methods: ["GET", "PATCH", "PUT"],
  schema: {
    name: { type: "string" },
    tags: { type: "list" },
    address: { type: "dict", schema: { city: { type: "string" } } },
    friend: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
  },
} satisfies NonNullable<Settings["DOMAIN"]>[string];

let api: TestApi;
afterEach(() => api.close());

function start(settings: Settings = {}): TestApi {
  api = testApi({ DOMAIN: { people }, ...settings });
  return api;
}

const q = (value: unknown) => encodeURIComponent(typeof value === "string" ? value : JSON.stringify(value));

async function expect400(response: Response): Promise<void> {
  expect(response.status).toBe(400);
  expect((await json(response))._error.code).toBe(400);
}

async function stored(): Promise<unknown[]> {
  return (await json(await api.get("/people")))._items;
}

describe("JSONP", () => {
  it("wraps the body for a plain identifier path", async () => {
    start({ JSONP_ARGUMENT: "callback" });
    for (const name of ["cb", "jQuery_123", "$", "window.app.receive"]) {
      const response = await api.get(`/people?callback=${q(name)}`);
      expect(response.status).toBe(200);
      expect(await response.text()).toMatch(new RegExp(`^${name.replace(/[$.]/g, "\\$&")}\\(\\{.*\\}\\)$`, "s"));
    }
  });

  it("refuses any other callback with 400 instead of echoing it", async () => {
    start({ JSONP_ARGUMENT: "callback" });
    for (const name of ["alert(1)//", "<script>x</script>", "a b", "1abc", "a;b", "cb\r\nSet-Cookie: x=1", "", "a[0]", "a-b"]) {
      const response = await api.get(`/people?callback=${q(name)}`);
      expect(response.status, name).toBe(400);
      expect(await response.text()).not.toContain("script");
    }
  });

  it("ignores the parameter when JSONP is off", async () => {
    start();
    const response = await api.get(`/people?callback=${q("alert(1)//")}`);
    expect(response.status).toBe(200);
    expect((await response.text()).startsWith("{")).toBe(true);
  });
});

describe("operator injection through where", () => {
  it("refuses server-side JavaScript anywhere, even with an empty DB_QUERY_BLACKLIST", async () => {
    start({ DB_QUERY_BLACKLIST: [] });
    const attacks = [
      { $where: "sleep(1000) || true" },
      { name: { $where: "1" } },
      { $or: [{ name: "x" }, { $where: "true" }] },
      { $expr: { $function: { body: "function() { return true }", args: [], lang: "js" } } },
      { $expr: { $gt: [{ $accumulator: { init: "function() {}", accumulate: "", accumulateArgs: [], merge: "", lang: "js" } }, 0] } },
      { name: { $not: { $where: "1" } } },
    ];
    for (const where of attacks) await expect400(await api.get(`/people?where=${q(where)}`));
    await expect400(await api.get(`/people?where=${q('$where == "1"')}`));
  });

  it("refuses DB_QUERY_BLACKLIST operators ($where and $regex by default) and unknown ones", async () => {
    start();
    await expect400(await api.get(`/people?where=${q({ name: { $regex: "^a" } })}`));
    await expect400(await api.get(`/people?where=${q({ name: { $foo: 1 } })}`));
    start({ DB_QUERY_BLACKLIST: ["$where", "$regex", "$in"] });
    await expect400(await api.get(`/people?where=${q({ name: { $in: ["a"] } })}`));
    expect((await api.get(`/people?where=${q({ name: { $nin: ["a"] } })}`)).status).toBe(200);
  });
});

describe("user regexes", () => {
  it("work once allowed, but only short and well-formed", async () => {
    start({ DB_QUERY_BLACKLIST: ["$where"] });
    await api.post("/people", [{ name: "alice" }, { name: "bob" }]);
    const found = await json(await api.get(`/people?where=${q({ name: { $regex: "^al" } })}`));
    expect(found._items.map((p: { name: string }) => p.name)).toEqual(["alice"]);
    expect((await api.get(`/people?where=${q({ name: { $regex: "a".repeat(256) } })}`)).status).toBe(200);
    await expect400(await api.get(`/people?where=${q({ name: { $regex: "a".repeat(257) } })}`));
    await expect400(await api.get(`/people?where=${q({ name: { $regex: "(unclosed" } })}`));
    await expect400(await api.get(`/people?where=${q({ name: { $regex: { $ne: 1 } } })}`));
    await expect400(await api.get(`/people?where=${q({ name: { $not: { $regex: "b".repeat(300) } } })}`));
    const notAl = await json(await api.get(`/people?where=${q({ name: { $not: { $regex: "^al" } } })}`));
    expect(notAl._items.map((p: { name: string }) => p.name)).toEqual(["bob"]);
  });

  it("refuse a $not whose operand is no operator expression, as MongoDB does", async () => {
    start({});
    await api.post("/people", [{ name: "alice" }, { name: "/a/" }]);
    for (const operand of ["/a/", "alice", 1, null, [], {}]) await expect400(await api.get(`/people?where=${q({ name: { $not: operand } })}`));
    const found = await json(await api.get(`/people?where=${q({ name: { $not: { $eq: "alice" } } })}`));
    expect(found._items.map((p: { name: string }) => p.name)).toEqual(["/a/"]);
  });
});

describe("prototype pollution", () => {
  const pristine = () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, "polluted")).toBe(false);
  };

  it("is refused in JSON bodies, whatever the depth, and nothing is stored", async () => {
    start();
    const bodies = [
      '{"name": "x", "__proto__": {"polluted": true}}',
      '{"name": "x", "address": {"__proto__": {"polluted": true}}}',
      '{"name": "x", "constructor": {"prototype": {"polluted": true}}}',
      '[{"name": "ok"}, {"name": "x", "tags": [{"__proto__": {"polluted": true}}]}]',
      '{"name": "x", "address.__proto__.polluted": true}',
    ];
    for (const body of bodies) {
      const response = await api.post("/people", body);
      expect([400, 422], body).toContain(response.status);
    }
    expect(await stored()).toEqual([]);
    pristine();
  });

  it("is refused in PATCH and PUT bodies and in form fields", async () => {
    start();
    const created = await json(await api.post("/people", { name: "x" }));
    const headers = { "If-Match": created._etag };
    expect([400, 422]).toContain((await api.patch(`/people/${created._id}`, '{"__proto__": {"polluted": true}}', headers)).status);
    expect([400, 422]).toContain((await api.patch(`/people/${created._id}`, '{"address": {"constructor": {"prototype": {"polluted": 1}}}}', headers)).status);
    expect([400, 422]).toContain((await api.put(`/people/${created._id}`, '{"name": "y", "__proto__": {"polluted": true}}', headers)).status);
    const form = await api.fetch("/people", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "name=x&__proto__=polluted" });
    expect([400, 422]).toContain(form.status);
    expect(await json(await api.get(`/people/${created._id}`))).toMatchObject({ name: "x", _etag: created._etag });
    pristine();
  });

  it("is refused in where, projection, embedded and sort", async () => {
    start();
    await api.post("/people", { name: "x" });
    const attempts = [
      `where=${q('{"__proto__": {"polluted": true}}')}`,
      `where=${q({ "name.__proto__.polluted": 1 })}`,
      `where=${q({ $and: [{ constructor: { prototype: { polluted: 1 } } }] })}`,
      `projection=${q('{"__proto__": 1}')}`,
      `projection=${q({ "constructor.prototype": 1 })}`,
      `embedded=${q('{"__proto__": 1}')}`,
      `embedded=${q({ "friend.__proto__": 1 })}`,
      `sort=__proto__`,
      `sort=${q('[("constructor", 1)]')}`,
      `sort=-name.__proto__.polluted`,
    ];
    for (const query of attempts) {
      const response = await api.get(`/people?${query}`);
      expect(response.status, query).toBe(400);
    }
    pristine();
  });
});

describe("NUL bytes in field names", () => {
  it("are a 400 in where, sort, projection and bodies on every store, and nothing is stored", async () => {
    start({ DOMAIN: { people: { ...people, allow_unknown: true } } });
    await api.post("/people", { name: "x" });
    const key = "a\u0000b";
    for (const query of [`where=${q({ [key]: 1 })}`, `where=${q({ $or: [{ [key]: 1 }] })}`, `sort=${q([[key, 1]])}`, `projection=${q({ [key]: 1 })}`]) {
      await expect400(await api.get(`/people?${query}`));
    }
    await expect400(await api.post("/people", { name: "y", [key]: 1 }));
    await expect400(await api.post("/people", { name: "y", address: { [key]: 1 } }));
    expect(await stored()).toHaveLength(1);
  });
});

describe("unpaired surrogates", () => {
  it("are a 400 in body values and keys on every store, and nothing is stored; a pair is kept", async () => {
    start({ DOMAIN: { people: { ...people, allow_unknown: true } } });
    const type = { "Content-Type": "application/json" };
    for (const body of ['{"name": "a\\ud800b"}', '{"name": "\\udfff"}', '{"tags": ["x", "\\ud83d"]}', '{"address": {"\\ud800": "x"}}', '[{"name": "ok"}, {"name": "\\ud800"}]']) {
      const response = await api.post("/people", body, type);
      await expect400(response.clone());
      expect((await json(response))._error.message).toBe("The JSON document holds an unpaired surrogate");
    }
    expect(await stored()).toEqual([]);
    const created = await json(await api.post("/people", '{"name": "\\ud83d\\ude00"}', type));
    expect((await json(await api.get(`/people/${created._id}`))).name).toBe("\u{1F600}");
    const bad = await api.patch(`/people/${created._id}`, '{"name": "\\ud83d"}', { ...type, "If-Match": created._etag });
    await expect400(bad);
    expect((await json(await api.get(`/people/${created._id}`))).name).toBe("\u{1F600}");
  });
});

describe("sorts with many keys", () => {
  it("take at most MongoDB's 32 on every store: a 400 past them", async () => {
    start();
    const keys = (count: number) => Array.from({ length: count }, (_, i) => `f${i}`);
    expect((await api.get(`/people?sort=${keys(32).join(",")}`)).status).toBe(200);
    await expect400(await api.get(`/people?sort=${keys(33).join(",")}`));
    await expect400(await api.get(`/people?sort=${keys(2000).join(",")}`));
    await expect400(await api.get(`/people?sort=${q(keys(40).map((key) => [key, 1]))}`));
  });
});

describe("many issues in one document", () => {
  // Each issue once re-sorted the whole list (Cerberus' order): 20,000 took minutes and held the server.
  it("are answered in one 422, unknown fields, a dict's and a list's items alike", async () => {
    start({ DOMAIN: { people: { ...people, schema: { ...people.schema, tags: { type: "list", schema: { type: "string" } } } } } });
    const fields = (count: number) => Array.from({ length: count }, (_, i) => `"k${i}": 1`).join(", ");
    for (const body of [`{${fields(20_000)}, "name": "x"}`, `{"address": {${fields(20_000)}}}`, `{"tags": [${Array.from({ length: 20_000 }, (_, i) => i).join(",")}]}`]) {
      const response = await api.post("/people", body, { "Content-Type": "application/json" });
      expect(response.status).toBe(422);
      expect((await json(response))._status).toBe("ERR");
    }
    expect(await stored()).toEqual([]);
  });
});

describe("JSON nesting", () => {
  const nested = (depth: number, leaf = "1") => '{"a":'.repeat(depth) + leaf + "}".repeat(depth);

  it("beyond MAX_JSON_DEPTH is a 400, in bodies and in where", async () => {
    start({ DOMAIN: { people: { ...people, allow_unknown: true } } });
    await expect400(await api.post("/people", nested(200)));
    await expect400(await api.post("/people", "[".repeat(5000) + "]".repeat(5000)));
    await expect400(await api.get(`/people?where=${q(nested(200))}`));
    await expect400(await api.get(`/people?where=${q("(".repeat(500) + 'name == "x"' + ")".repeat(500))}`));
    expect((await api.post("/people", nested(10))).status).toBe(201);
    expect(await stored()).toHaveLength(1);
  });

  it("counts a dotted key's parts as levels, in JSON, form and multipart bodies", async () => {
    start({ DOMAIN: { people: { ...people, allow_unknown: true } } });
    const deep = Array.from({ length: 3000 }, () => "a").join(".");
    await expect400(await api.post("/people", { name: "x", [deep]: 1 }));
    await expect400(await api.fetch("/people", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: `name=x&${deep}=1` }));
    const form = new FormData();
    form.append("name", "x");
    form.append(deep, "1");
    await expect400(await api.fetch("/people", { method: "POST", body: form }));
    expect(await stored()).toEqual([]);
    expect((await api.fetch("/people", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "name=x&a.b.c=1" })).status).toBe(201);
  });

  it("counts a dotted key's parts as levels in where, JSON and Python syntax, at the top and inside a condition", async () => {
    // SQLite nests an expression per part and failed (500) past 1,000, after seconds of work.
    start({ DOMAIN: { people: { ...people, allow_unknown: true } } });
    const path = (parts: number) => Array.from({ length: parts }, () => "a").join(".");
    await expect400(await api.get(`/people?where=${q({ [path(1000)]: 1 })}`));
    await expect400(await api.get(`/people?where=${q({ a: { $elemMatch: { [path(80)]: 1 } } })}`));
    await expect400(await api.get(`/people?where=${q({ $or: [{ [path(70)]: 1 }] })}`));
    await expect400(await api.get(`/people?where=${encodeURIComponent(`${path(1000)} == 1`)}`));
    expect((await api.post("/people", { name: "x", a: { a: { a: 1 } } })).status).toBe(201);
    const found = await json(await api.get(`/people?where=${q({ [path(3)]: 1 })}`));
    expect(found._items.map((p: { name: string }) => p.name)).toEqual(["x"]);
    expect((await api.get(`/people?where=${q({ [path(60)]: 1 })}`)).status).toBe(200);
  });

  it("counts a dotted path's parts as levels in sort and projection", async () => {
    // A projection of 20,000 parts overflowed the stack (a 500) after seconds of work.
    start({ DOMAIN: { people: { ...people, allow_unknown: true } } });
    const path = (parts: number) => Array.from({ length: parts }, () => "a").join(".");
    expect((await api.post("/people", { name: "x", a: { a: { a: 1 } } })).status).toBe(201);
    await expect400(await api.get(`/people?projection=${q({ [path(3000)]: 1 })}`));
    await expect400(await api.get(`/people?projection=${q({ [path(65)]: 0 })}`));
    await expect400(await api.get(`/people?sort=${path(65)}`));
    await expect400(await api.get(`/people?sort=${q(`[("${path(65)}", 1)]`)}`));
    const projected = await json(await api.get(`/people?projection=${q({ [path(3)]: 1 })}`));
    expect(projected._items[0].a).toEqual({ a: { a: 1 } });
    expect((await api.get(`/people?sort=-${path(64)}`)).status).toBe(200);
  });

  it("follows MAX_JSON_DEPTH", async () => {
    start({ MAX_JSON_DEPTH: 4, DOMAIN: { people: { ...people, allow_unknown: true } } });
    await expect400(await api.post("/people", nested(6)));
    expect((await api.post("/people", nested(3))).status).toBe(201);
  });
});

describe("absurd paging", () => {
  it("clamps or defaults page sizes and never crashes on huge or strange pages", async () => {
    start();
    await api.post("/people", [{ name: "a" }, { name: "b" }]);
    const meta = async (query: string) => (await json(await api.get(`/people?${query}`)))._meta;
    expect(await meta("max_results=1e308")).toMatchObject({ max_results: 50 });
    expect(await meta("max_results=inf")).toMatchObject({ max_results: 50 });
    expect(await meta("max_results=-5")).toMatchObject({ max_results: 25 });
    expect(await meta("max_results=abc")).toMatchObject({ max_results: 25 });
    expect(await meta("page=abc")).toMatchObject({ page: 1 });
    expect(await meta("page=-3")).toMatchObject({ page: 3 });
    const far = await api.get("/people?page=1000000000");
    expect(far.status).toBe(200);
    expect((await json(far))._items).toEqual([]);
    await expect400(await api.get("/people?page=99999999999999999999999"));
  });
});

describe("CR/LF aimed at response headers", () => {
  const clean = (response: Response) => {
    for (const [name, value] of response.headers) {
      expect(value, name).not.toMatch(/[\r\n]/);
      expect(name).not.toBe("set-cookie");
    }
  };

  it("never reach a header from the path, the query or a document id", async () => {
    start({
      JSONP_ARGUMENT: "callback",
      ITEM_URL: 'regex("[^/]+")',
      DOMAIN: { people: { ...people, schema: { ...people.schema, _id: { type: "string" } } } },
    });
    const created = await api.post("/people", { _id: "x\r\nSet-Cookie: a=b", name: "n" });
    expect(created.status).toBe(201);
    clean(created);
    expect(created.headers.get("location")).not.toContain("Set-Cookie: a");
    const reads = [
      await api.get("/people/x%0D%0ASet-Cookie:%20a=b"),
      await api.get("/people?callback=cb%0D%0ASet-Cookie:%20a=b"),
      await api.get("/people%0D%0ASet-Cookie:%20a=b"),
      await api.get("/people?where=%7B%22name%22:%22%0D%0ASet-Cookie%22%7D"),
    ];
    for (const response of reads) clean(response);
  });
});
