// `unique` left to the store's unique index on POST (src/methods/post.ts, uniqueByIndex): the
// answers must read exactly as when every value is looked up first, whichever path reports it;
// and uniqueness where the index can be missing (the last describe).
import { MongoClient } from "mongodb";
import { afterAll, describe, expect, it } from "vitest";
import type { Driver } from "../../src/drivers/types.ts";
import { createDriver } from "../../src/drivers/registry.ts";
import { createLogger, type LogRecord } from "../../src/logging.ts";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";
import { ON_MONGODB_EMULATOR, testDriver, type ScopedDriver } from "../support/drivers.ts";
import { peopleSettings } from "../support/settings.ts";

const notUnique = (value: string) => ({ lastname: `value '${value}' is not unique` });
const FAILURE = (count: number) => ({ code: 422, message: `Insertion failure: ${count} document(s) contain(s) error(s)` });

async function total(api: TestApi): Promise<number> {
  return Number((await api.get("/people")).headers.get("x-total-count"));
}

describe.each([
  ["without hooks (the index answers)", null],
  ["with an on_insert_people hook (every value looked up first)", "on_insert_people"],
  ["with a generic on_insert hook (every value looked up first)", "on_insert"],
] as const)("POST of a value another document holds, %s", (_name, hook) => {
  const inserted: unknown[] = [];
  // The generic event is called with the resource's name first, as Eve calls it.
  const record = (...args: unknown[]) => void inserted.push(...(args.at(-1) as unknown[]));
  const api = testApi(peopleSettings(), hook ? { hooks: { [hook]: record } } : {});
  afterAll(() => api.close());

  it("refuses one document with Eve's issue, storing nothing", async () => {
    expect((await api.post("/people", { lastname: "Held" })).status).toBe(201);
    const before = await total(api);
    const calls = inserted.length;
    const response = await api.post("/people", { lastname: "Held", firstname: "Other" });
    expect(response.status).toBe(422);
    expect(await json(response)).toEqual({ _status: "ERR", _issues: notUnique("Held"), _error: FAILURE(1) });
    expect(await total(api)).toBe(before);
    // A refused document never reaches on_insert.
    expect(inserted.length).toBe(calls);
  });

  it("lists the duplicate beside another rule's issue of the same document", async () => {
    const response = await api.post("/people", { lastname: "Held", firstname: 7 });
    expect(response.status).toBe(422);
    expect((await json(response))._issues).toEqual({ ...notUnique("Held"), firstname: "must be of string type" });
  });

  it("reports every duplicate of a bulk insert, and a clean document as OK", async () => {
    expect((await api.post("/people", { lastname: "Kept" })).status).toBe(201);
    const before = await total(api);
    const response = await api.post("/people", [{ lastname: "Fresh1" }, { lastname: "Held" }, { lastname: "Kept" }]);
    expect(response.status).toBe(422);
    expect(await json(response)).toEqual({
      _status: "ERR",
      _items: [{ _status: "OK" }, { _status: "ERR", _issues: notUnique("Held") }, { _status: "ERR", _issues: notUnique("Kept") }],
      _error: FAILURE(2),
    });
    expect(await total(api)).toBe(before);
    expect((await api.get("/people/Fresh1")).status).toBe(404);
  });

  it("reports a duplicate in a batch another document of which breaks another rule", async () => {
    const response = await api.post("/people", [{ lastname: "Held" }, { lastname: "Fresh2", firstname: 7 }]);
    expect(response.status).toBe(422);
    expect((await json(response))._items).toEqual([
      { _status: "ERR", _issues: notUnique("Held") },
      { _status: "ERR", _issues: { firstname: "must be of string type" } },
    ]);
  });

  it("still stores a batch of new values, and refuses them once stored", async () => {
    expect((await api.post("/people", [{ lastname: "New1" }, { lastname: "New2" }])).status).toBe(201);
    const again = await api.post("/people", [{ lastname: "New3" }, { lastname: "New2" }]);
    expect((await json(again))._items).toEqual([{ _status: "OK" }, { _status: "ERR", _issues: notUnique("New2") }]);
  });
});

// Uniqueness does not rest on the index alone (src/data/layer.ts, Bound.uniqueIndexed): another
// client can drop a collection while everest serves (Eve's tests drop the database between
// tests; an operator restores a dump without its indexes), and MongoDB then recreates it on the
// next insert with no unique index. Only a store no other client can reach (the embedded one)
// has its POSTs' `unique` left to the index; everywhere else values are looked up first, as Eve
// does, and the index still refuses what concurrent writers let through.
// Eve's scenario: tests/methods/post.py TestPost::test_unique_in_root_attribute.
describe("unique without the store's index", () => {
  const settings = (unique = true): Settings => ({
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: { test_unique: { schema: { unique_attribute: { type: "string", ...(unique ? { unique: true } : {}) } } } },
  });
  const payload = (value: string) => ({ unique_attribute: value });
  const refusal = (value: string) => ({ _status: "ERR", _issues: { unique_attribute: `value '${value}' is not unique` }, _error: FAILURE(1) });

  /** One driver instance of the suite's store, which two APIs can share as two processes share a database. */
  async function suiteDriver(): Promise<Driver> {
    return testDriver() ?? (await createDriver("memory", { databaseName: "everest", settings: {} }));
  }

  /** The driver as a store that lost its indexes: each collection comes without them. */
  function withoutIndexes(driver: Driver): Driver {
    return new Proxy(driver, {
      get(target, key) {
        if (key === "createIndexes") return async () => undefined;
        if (key === "indexesStay") return false;
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  it("refuses a duplicate in a collection without the index (test_unique_in_root_attribute)", async () => {
    const api = testApi(settings(), { driver: withoutIndexes(await suiteDriver()) });
    try {
      expect((await api.post("/test_unique", payload("unique_value"))).status).toBe(201);
      const again = await api.post("/test_unique", payload("unique_value"));
      expect(again.status).toBe(422);
      expect(await json(again)).toEqual(refusal("unique_value"));
      expect((await api.post("/test_unique", payload("unique_value_2"))).status).toBe(201);
      expect(Number((await api.get("/test_unique")).headers.get("x-total-count"))).toBe(2);
    } finally {
      await api.close();
    }
  });

  it.each([
    ["", {}],
    [", also where mongo_indexes declares an index on the same keys (Eve's way)", { mongo_indexes: { unique_attribute_idx: [["unique_attribute", 1]] } }],
  ])("stores one of many concurrent POSTs of one value, with its index%s", async (_how, extra) => {
    const plain = settings();
    const api = testApi({ ...plain, DOMAIN: { test_unique: { ...plain.DOMAIN!.test_unique, ...extra } } });
    try {
      const statuses = (await Promise.all(Array.from({ length: 8 }, () => api.post("/test_unique", payload("raced"))))).map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 422)).toHaveLength(7);
      expect(Number((await api.get('/test_unique?where={"unique_attribute":"raced"}')).headers.get("x-total-count"))).toBe(1);
    } finally {
      await api.close();
    }
  });

  it("starts over a collection that already holds duplicates: says so, serves it, and refuses new duplicates", async () => {
    const driver = await suiteDriver();
    const before = testApi(settings(false), { driver });
    const records: LogRecord[] = [];
    const after = testApi(settings(), { driver, logger: createLogger((record) => records.push(record)) });
    try {
      expect((await before.post("/test_unique", [payload("twice"), payload("twice")])).status).toBe(201);
      await after.handler.app.open();
      const warnings = records.filter((r) => r.level === "WARNING").map((r) => r.message);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^the unique index 'unique_attribute_unique' on \S*test_unique \(unique_attribute\) cannot be built: documents in it already share a value/);
      expect(warnings[0]).toContain("checked by looking values up before each write");
      expect(Number((await after.get("/test_unique")).headers.get("x-total-count"))).toBe(2);
      expect(await json(await after.post("/test_unique", payload("twice")))).toEqual(refusal("twice"));
      expect((await after.post("/test_unique", payload("once"))).status).toBe(201);
      expect(await json(await after.post("/test_unique", payload("once")))).toEqual(refusal("once"));
      expect(records.filter((r) => r.level === "WARNING")).toHaveLength(1);
    } finally {
      await after.close();
    }
  });

  it.runIf((process.env.EVEREST_TEST_DB ?? "").includes("mongodb"))("refuses a duplicate after another client dropped the collection, and a restart builds the index again", async () => {
    const driver = await suiteDriver();
    const api = testApi(settings(), { driver });
    const client = await MongoClient.connect(process.env.MONGODB_URI!);
    try {
      const collection = client.db((driver as ScopedDriver).database("everest")).collection("test_unique");
      expect((await api.post("/test_unique", payload("kept"))).status).toBe(201);
      await collection.drop();
      expect((await api.post("/test_unique", payload("unique_value"))).status).toBe(201);
      expect(await json(await api.post("/test_unique", payload("unique_value")))).toEqual(refusal("unique_value"));
      expect((await api.post("/test_unique", payload("unique_value_2"))).status).toBe(201);
      expect(await collection.countDocuments({ unique_attribute: "unique_value" })).toBe(1);
      expect((await collection.indexes()).map((index) => index.name)).toEqual(["_id_"]);

      const restarted = testApi(settings(), { driver });
      await restarted.handler.app.open();
      expect((await collection.indexes()).map((index) => index.name)).toContain("unique_attribute_unique");
      const statuses = (await Promise.all(Array.from({ length: 6 }, () => restarted.post("/test_unique", payload("raced"))))).map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    } finally {
      await client.close();
      await api.close();
    }
  });
});

// A unique field's index is sparse: documents without the field are not in it, a null is
// (docs/decisions.md §5, as MongoDB indexes it; the emulator lets a second null through).
describe("unique on an optional, nullable field", () => {
  const api = testApi({ DOMAIN: { codes: { resource_methods: ["GET", "POST"], schema: { n: { type: "integer" }, code: { type: "string", unique: true, nullable: true } } } } });
  afterAll(() => api.close());

  it("stores any number of documents without the field, and one null", async () => {
    for (const n of [1, 2, 3]) expect((await api.post("/codes", { n })).status).toBe(201);
    expect((await api.post("/codes", [{ n: 4 }, { n: 5 }])).status).toBe(201);
    expect((await api.post("/codes", { n: 6, code: null })).status).toBe(201);
    expect((await api.post("/codes", { n: 7, code: "x" })).status).toBe(201);
    const duplicate = await api.post("/codes", { n: 8, code: "x" });
    expect(duplicate.status).toBe(422);
    expect((await json(duplicate))._issues).toEqual({ code: "value 'x' is not unique" });
    if (!ON_MONGODB_EMULATOR) {
      const secondNull = await api.post("/codes", { n: 9, code: null });
      expect(secondNull.status).toBe(422);
      expect((await json(secondNull))._issues).toEqual({ code: "value 'None' is not unique" });
    }
    expect(Number((await api.get("/codes")).headers.get("x-total-count"))).toBe(7);
  });
});

// Soft delete and datasource filters leave `unique` to lookups (no index: src/methods/unique-claims.ts),
// as `unique_within_resource` always is; concurrent writes of one value through one server must
// still store it once (MongoDB stored 22 of 24 concurrent POSTs of one unique_within_resource value).
describe.each(["unique", "unique_within_resource"] as const)("%s without an index, under concurrent writes", (rule) => {
  const api = testApi({
    DOMAIN: {
      notes: {
        soft_delete: true,
        resource_methods: ["GET", "POST", "PATCH"],
        item_methods: ["GET", "PATCH", "PUT", "DELETE"],
        update_operators: ["$set", "$inc"],
        patch_by_filter: true,
        schema: { name: rule === "unique" ? { type: "string", unique: true } : { type: "string", unique_within_resource: true }, n: { type: "integer" } },
      },
    },
  });
  afterAll(() => api.close());
  const named = async (name: string) => (await json(await api.get(`/notes?where=${encodeURIComponent(JSON.stringify({ name }))}`)))._meta.total;

  it("stores one of many concurrent POSTs of one value, single and bulk", async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => api.post("/notes", i % 3 === 0 ? [{ name: `other${i}` }, { name: "same" }] : { name: "same" })));
    expect(answers.map((r) => r.status).filter((s) => s === 201)).toHaveLength(1);
    expect(answers.every((r) => r.status === 201 || r.status === 422)).toBe(true);
    expect(await named("same")).toBe(1);
  });

  it("lets one of many concurrent PATCHes and PUTs give documents one value", async () => {
    const docs = await Promise.all(Array.from({ length: 6 }, async (_, i) => json(await api.post("/notes", { name: `p${i}` }))));
    const answers = await Promise.all(
      docs.map((doc, i) => (i % 2 ? api.patch(`/notes/${doc._id}`, { name: "taken" }, { "If-Match": doc._etag }) : api.put(`/notes/${doc._id}`, { name: "taken" }, { "If-Match": doc._etag }))),
    );
    expect(answers.map((r) => r.status).filter((s) => s === 200)).toHaveLength(1);
    expect(await named("taken")).toBe(1);
  });

  it("lets one of many concurrent $set PATCHes and PATCHes by filter give documents one value", async () => {
    const docs = await Promise.all(Array.from({ length: 6 }, async (_, i) => json(await api.post("/notes", { name: `f${i}`, n: i }))));
    const answers = await Promise.all(
      docs.map((doc, i) =>
        i % 3 === 0
          ? api.patch(`/notes/${doc._id}`, { $set: { name: "claimed" } }, { "If-Match": doc._etag })
          : api.patch(`/notes?where=${encodeURIComponent(JSON.stringify({ n: i }))}`, i % 3 === 1 ? { name: "claimed" } : { $set: { name: "claimed" } }),
      ),
    );
    expect(answers.map((r) => r.status).filter((s) => s === 200)).toHaveLength(1);
    expect(answers.every((r) => r.status === 200 || r.status === 422)).toBe(true);
    expect(await named("claimed")).toBe(1);
  });

  it("lets one of two restores of deleted documents holding one value through", async () => {
    const a = await json(await api.post("/notes", { name: "twice" }));
    await api.delete(`/notes/${a._id}`, { "If-Match": a._etag });
    const b = await json(await api.post("/notes", { name: "twice" }));
    await api.delete(`/notes/${b._id}`, { "If-Match": b._etag });
    const [first, second] = await Promise.all([a, b].map(async (doc) => api.patch(`/notes/${doc._id}`, {}, { "If-Match": (await json(await api.get(`/notes/${doc._id}?show_deleted=true`)))._etag ?? "" })));
    expect([first!.status, second!.status].sort()).toEqual([200, 422]);
    expect(await named("twice")).toBe(1);
  });
});

// Eve's settings write an index with options as a (keys, options) tuple: a two-element list in JSON.
describe("mongo_indexes in each of Eve's forms", () => {
  it("builds a unique index given as (keys, options) or {key, options}, and refuses another shape at start-up", async () => {
    for (const definition of [[[["code", 1]], { unique: true }], { key: [["code", 1]], options: { unique: true } }]) {
      const api = testApi({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { codes: { schema: { code: { type: "string" } }, mongo_indexes: { code_idx: definition } } } });
      try {
        expect((await api.post("/codes", { code: "a" })).status).toBe(201);
        const again = await api.post("/codes", { code: "a" });
        expect(again.status, JSON.stringify(definition)).toBeGreaterThanOrEqual(400);
        expect(again.status).toBeLessThan(500);
        expect(Number((await api.get("/codes")).headers.get("x-total-count"))).toBe(1);
      } finally {
        await api.close();
      }
    }
    for (const bad of [[["code"]], { key: [["code", 1]], unique: true }]) {
      expect(() => testApi({ DOMAIN: { codes: { schema: { code: { type: "string" } }, mongo_indexes: { code_idx: bad } } } })).toThrow(/mongo_indexes.*must map names to indexes/);
    }
  });
});
