// The data-api driver through the gateway (in-process: the driver's fetch calls the gateway's
// handler), backed by the memory driver and, with MONGODB_URI, by the mongodb driver; then the
// gateway's own rules, and how the driver reports what the gateway says.
import { retentionOf } from "../../src/drivers/change-log.ts";
import { EJSON, ObjectId } from "bson";
import { afterAll, describe, expect, it } from "vitest";
import { createDataApiHandler, type DataApiHandlerOptions } from "../../src/gateway/index.ts";
import { DataApiDriver } from "../../src/drivers/data-api/index.ts";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { MongoDriver } from "../../src/drivers/mongodb/index.ts";
import { createDriver } from "../../src/drivers/registry.ts";
import { DatabaseUnavailableError, DuplicateKeyError, InvalidQueryError, type Driver, type Target } from "../../src/drivers/types.ts";
import { createHandler } from "../../src/handler.ts";
import { createLogger, type LogRecord } from "../../src/logging.ts";
import { dataApiOver, inProcessFetch } from "../support/drivers.ts";
import { MONGODB_EMULATED, rejection, runDriverConformance } from "./conformance.ts";
import { etagStamp } from "../../src/render/etag.ts";

const mongodbUri = process.env.MONGODB_URI;
const KEY = "s3cret-key";
const BASE = "https://gateway.test/app/everest/endpoint/data/v1";


/** Backing drivers the conformance runs built, closed at the end (the data-api driver holds nothing). */
const backings: Driver[] = [];
afterAll(async () => {
  await Promise.all(backings.map((driver) => driver.close()));
});

runDriverConformance(
  "data-api → gateway → memory",
  async (settings = {}) => {
    const memory = await MemoryDriver.open({ databaseName: "everest", retention: retentionOf(settings) });
    backings.push(memory);
    return dataApiOver(memory);
  },
  { remote: true },
);

describe.skipIf(!mongodbUri)("data-api over mongodb", () => {
  runDriverConformance("data-api → gateway → mongodb", async (settings = {}) => {
    const mongodb = new MongoDriver({ uri: mongodbUri!, databaseName: "everest", retention: retentionOf(settings) });
    backings.push(mongodb);
    return dataApiOver(mongodb);
    // MongoDB stamps ETags with random values, and a standalone server updates many documents one by one.
  }, { emulated: MONGODB_EMULATED, randomStamps: true, allOrNothing: false, remote: true });
});

/** A gateway over a fresh memory driver, and a raw client for it. */
async function gateway(options: Partial<DataApiHandlerOptions> = {}) {
  const memory = await MemoryDriver.open({ databaseName: "everest" });
  const handler = createDataApiHandler(memory, { apiKeys: [KEY], ...options });
  const call = async (action: string, body: unknown, headers: Record<string, string> = { "api-key": KEY }) => {
    const response = await handler(
      new Request(`${BASE}/action/${action}`, {
        method: "POST",
        headers: { "Content-Type": "application/ejson", Accept: "application/ejson", ...headers },
        body: typeof body === "string" ? body : EJSON.stringify(body, { relaxed: false }),
      }),
    );
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: EJSON.parse(text) as Record<string, any> };
  };
  const scope = { dataSource: "mongodb-atlas", database: "app", collection: "people" };
  return { memory, handler, call, scope };
}

describe("gateway", () => {
  it("needs a valid API key, in the api-key header or as a bearer token", async () => {
    const { call, scope } = await gateway({ apiKeys: ["other", KEY] });
    expect(await call("find", scope, {})).toMatchObject({ status: 401, body: { error_code: "InvalidSession" } });
    expect((await call("find", scope, { "api-key": "wrong" })).status).toBe(401);
    expect((await call("find", scope, { "api-key": KEY.slice(0, -1) })).status).toBe(401);
    expect((await call("find", scope, { Authorization: `Basic ${KEY}` })).status).toBe(401);
    expect((await call("find", scope, { "api-key": KEY })).status).toBe(200);
    expect((await call("find", scope, { "api-key": "other" })).status).toBe(200);
    expect((await call("find", scope, { Authorization: `Bearer ${KEY}` })).status).toBe(200);
    // Unauthenticated callers learn nothing, not even which actions exist.
    expect((await call("nonsense", scope, {})).status).toBe(401);
  });

  it("cannot be created without a key", async () => {
    const memory = await MemoryDriver.open({ databaseName: "everest" });
    expect(() => createDataApiHandler(memory, { apiKeys: [] })).toThrow(/at least one/);
    expect(() => createDataApiHandler(memory, { apiKeys: [""] })).toThrow(/at least one/);
  });

  it("refuses a malformed keyset position", async () => {
    const { call, scope } = await gateway();
    const sorted = { ...scope, sort: { n: 1, _id: 1 } };
    expect(await call("find", { ...sorted, "everest.after": 5 })).toMatchObject({ status: 400, body: { error_code: "InvalidParameter" } });
    expect(await call("find", { ...scope, sort: { n: 1 }, "everest.after": null })).toMatchObject({ status: 400, body: { error_code: "InvalidParameter" } });
    expect(await call("find", { ...sorted, filter: { n: 1 }, "everest.after": { n: 1, _id: 1 } })).toMatchObject({ status: 400, body: { error_code: "InvalidParameter" } });
    expect(await call("find", { ...sorted, filter: { $and: [{}, { n: { $gt: 1 } }] }, "everest.after": { n: 1, _id: 1 } })).toMatchObject({ status: 200 });
    expect(await call("everest.estimatedCount", scope)).toMatchObject({ status: 200, body: { count: 0 } });
  });

  it("refuses unknown actions, other methods and other paths", async () => {
    const { call, handler, scope } = await gateway();
    expect(await call("dropDatabase", scope)).toMatchObject({ status: 400, body: { error_code: "UnknownAction" } });
    const get = await handler(new Request(`${BASE}/action/find`, { headers: { "api-key": KEY } }));
    expect(get.status).toBe(405);
    expect(get.headers.get("Allow")).toBe("POST");
    expect((await handler(new Request(`${BASE}/find`, { method: "POST", headers: { "api-key": KEY } }))).status).toBe(404);
  });

  it("answers bad input with 4xx JSON errors", async () => {
    const { call, handler, scope } = await gateway();
    const cases: Array<[unknown, string]> = [
      ["{not json", "InvalidParameter"],
      ["", "InvalidParameter"],
      ["[1, 2]", "InvalidParameter"],
      ['{"dataSource": "x", "database": "app", "collection": "c", "filter": {"_id": {"$oid": "zz"}}}', "InvalidParameter"],
      // bson would read these as the epoch and as empty bytes.
      ['{"dataSource": "x", "database": "app", "collection": "c", "filter": {"d": {"$date": "2026-13-45T99:00:00Z"}}}', "InvalidParameter"],
      ['{"dataSource": "x", "database": "app", "collection": "c", "filter": {"d": {"$date": "notadate"}}}', "InvalidParameter"],
      ['{"dataSource": "x", "database": "app", "collection": "c", "filter": {"b": {"$binary": {"base64": "!!!", "subType": "00"}}}}', "InvalidParameter"],
      [{ database: "app", collection: "c" }, "MissingParameter"],
      [{ dataSource: "x", collection: "c" }, "MissingParameter"],
      [{ ...scope, database: 5 }, "InvalidParameter"],
      [{ ...scope, filter: [1] }, "InvalidParameter"],
      [{ ...scope, limit: -1 }, "InvalidParameter"],
      [{ ...scope, sort: { name: "up" } }, "InvalidParameter"],
      [{ ...scope, projection: { name: 2 } }, "InvalidParameter"],
      [{ ...scope, filter: { age: { $bogus: 1 } } }, "InvalidQuery"],
    ];
    for (const [body, code] of cases) {
      const answer = await call("find", body);
      expect(answer.status, String(JSON.stringify(body))).toBe(400);
      expect(answer.body.error_code, String(JSON.stringify(body))).toBe(code);
      expect(typeof answer.body.error).toBe("string");
    }
    expect((await call("updateOne", { ...scope, filter: {}, update: { name: "x" } })).body.error_code).toBe("InvalidParameter");
    expect((await call("updateOne", { ...scope, filter: {}, update: { $set: { a: 1 } }, upsert: true })).body.error_code).toBe("InvalidParameter");
    expect((await call("insertMany", { ...scope, documents: [] })).status).toBe(400);
    expect((await call("insertMany", { ...scope, documents: [1] })).status).toBe(400);
    expect((await call("everest.createIndexes", { ...scope, indexes: [{ keys: { a: 1 } }] })).status).toBe(400);
    const latin1 = await handler(new Request(`${BASE}/action/find`, { method: "POST", headers: { "api-key": KEY }, body: new Uint8Array([0x7b, 0xff, 0x7d]) }));
    expect(latin1.status).toBe(400);
  });

  it("refuses server-side JavaScript anywhere in a filter, update or pipeline", async () => {
    const { call, scope } = await gateway();
    expect((await call("find", { ...scope, filter: { $or: [{ $where: "true" }] } })).body.error_code).toBe("InvalidQuery");
    expect((await call("updateMany", { ...scope, filter: {}, update: { $set: { a: { $function: {} } } } })).body.error_code).toBe("InvalidQuery");
    const accumulator = { $group: { _id: null, x: { $accumulator: { init: "function() {}" } } } };
    expect((await call("aggregate", { ...scope, pipeline: [accumulator] })).body.error_code).toBe("InvalidQuery");
  });

  it("checks the parameters of everest's atomic updates before writing anything", async () => {
    const { call, memory, scope } = await gateway({ maxBatch: 2 });
    const t = { database: "app", collection: "people" };
    await memory.insertMany(t, [{ _id: 1, n: 1 }, { _id: 2, n: 2 }, { _id: 3, n: 3 }]);
    const update = { $inc: { n: 1 } };
    const cases: Array<[string, unknown, number, string]> = [
      ["everest.updateMany", { ...scope, filter: {}, update }, 400, "MissingParameter"],
      ["everest.updateMany", { ...scope, filter: {}, update, ids: [1, 2, 3] }, 413, "BatchTooLarge"],
      ["everest.updateMany", { ...scope, filter: {}, update, ids: 1 }, 400, "InvalidParameter"],
      ["everest.findOneAndUpdate", { ...scope, filter: {}, update: { n: 5 } }, 400, "InvalidParameter"],
      ["everest.findOneAndUpdate", { ...scope, filter: {}, update, stamp: { field: 5 } }, 400, "InvalidParameter"],
      ["everest.findOneAndUpdate", { ...scope, filter: {}, update, stamp: { field: "_etag", ignore: [1] } }, 400, "InvalidParameter"],
      ["everest.findOneAndUpdate", { ...scope, filter: {}, update, require: { $where: "true" } }, 400, "InvalidQuery"],
      ["everest.findOneAndUpdate", { ...scope, filter: {}, update: { $set: { a: { $function: {} } } } }, 400, "InvalidQuery"],
    ];
    for (const [action, body, status, code] of cases) expect(await call(action, body), JSON.stringify(body)).toMatchObject({ status, body: { error_code: code } });
    expect((await memory.find(t, { filter: {}, sort: [["_id", 1]] })).map((d) => d.n)).toEqual([1, 2, 3]);
    const unmet = await call("everest.findOneAndUpdate", { ...scope, filter: { _id: 1 }, update, require: { n: { $gt: 5 } } });
    expect(unmet).toMatchObject({ status: 412, body: { error_code: "UnmetRequirement", documents: [{ _id: 1, n: 1 }] } });
    const stamped = await call("everest.findOneAndUpdate", { ...scope, filter: { _id: 1 }, update, stamp: { field: "_etag", ignore: null } });
    expect(stamped.body.change.after).toEqual({ _id: 1, n: 2, _etag: etagStamp("_etag", null).value({ _id: 1, n: 2 }) });
  });

  it("caps batches, request bodies and responses, refusing rather than truncating", async () => {
    const { call, handler, memory, scope } = await gateway({ maxBatch: 2, maxRequestBytes: 2000, maxResponseBytes: 1000 });
    const tooMany = await call("insertMany", { ...scope, documents: [{ n: 1 }, { n: 2 }, { n: 3 }] });
    expect(tooMany).toMatchObject({ status: 413, body: { error_code: "BatchTooLarge" } });
    expect(await memory.count({ database: "app", collection: "people" }, {})).toBe(0);

    const big = { ...scope, documents: [{ text: "x".repeat(3000) }] };
    expect(await call("insertMany", big)).toMatchObject({ status: 413, body: { error_code: "PayloadTooLarge" } });
    // Without a Content-Length the body is counted as it streams in.
    const bytes = new TextEncoder().encode(EJSON.stringify(big));
    const streamed = new ReadableStream({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    });
    const response = await handler(new Request(`${BASE}/action/insertMany`, { method: "POST", headers: { "api-key": KEY }, body: streamed, duplex: "half" } as RequestInit));
    expect(response.status).toBe(413);

    await call("insertMany", { ...scope, documents: [{ text: "y".repeat(600) }, { text: "z".repeat(600) }] });
    expect(await call("find", scope)).toMatchObject({ status: 413, body: { error_code: "ResponseTooLarge" } });
    expect((await call("find", { ...scope, limit: 1 })).status).toBe(200);
  });

  it("serves only the databases and collections it is told to, also through pipelines", async () => {
    const { call, scope } = await gateway({ databases: ["app"], collections: ["people", "cities"], dataSource: "main" });
    const main = { ...scope, dataSource: "main" };
    expect((await call("find", main)).status).toBe(200);
    expect(await call("find", { ...main, database: "admin" })).toMatchObject({ status: 403, body: { error_code: "Forbidden" } });
    expect((await call("find", { ...main, collection: "secrets" })).status).toBe(403);
    expect((await call("find", scope)).status).toBe(403);
    const through = async (stage: Record<string, unknown>) => (await call("aggregate", { ...main, pipeline: [stage] })).status;
    expect(await through({ $lookup: { from: "cities", localField: "city", foreignField: "name", as: "c" } })).toBe(200);
    expect(await through({ $lookup: { from: "secrets", localField: "a", foreignField: "b", as: "s" } })).toBe(403);
    expect(await through({ $unionWith: { coll: "cities", pipeline: [{ $lookup: { from: "secrets", pipeline: [], as: "s" } }] } })).toBe(403);
    expect(await through({ $facet: { a: [{ $unionWith: "secrets" }] } })).toBe(403);
    expect(await through({ $out: { db: "other", coll: "people" } })).toBe(403);
    expect(await through({ $merge: { into: "secrets" } })).toBe(403);
    expect((await call("everest.mediaGet", { dataSource: "main", database: "admin", id: new ObjectId().toHexString() })).status).toBe(403);
    // A ping names the collections an instance uses, in the database it names.
    expect((await call("everest.ping", { dataSource: "main", database: "app", collections: ["people", "cities"] })).status).toBe(200);
    expect(await call("everest.ping", { dataSource: "main", database: "app", collections: ["people", "secrets"] })).toMatchObject({ status: 403, body: { error_code: "Forbidden" } });
    expect(await call("everest.ping", { dataSource: "main", collections: ["people"] })).toMatchObject({ status: 400, body: { error_code: "MissingParameter" } });
  });

  it("answers the protocol's standard actions", async () => {
    const { call, scope } = await gateway();
    const one = await call("insertOne", { ...scope, document: { name: "ada", age: 36 } });
    expect(one.body.insertedId).toBeInstanceOf(ObjectId);
    const many = await call("insertMany", { ...scope, documents: [{ name: "alan", age: 41 }, { _id: 7, name: "grace", age: 85 }] });
    expect(many.body.insertedIds).toEqual([expect.any(ObjectId), 7]);
    expect((await call("findOne", { ...scope, filter: { name: "ada" }, projection: { _id: 0 } })).body).toEqual({ document: { name: "ada", age: 36 } });
    expect((await call("findOne", { ...scope, filter: { name: "nobody" } })).body).toEqual({ document: null });
    const found = await call("find", { ...scope, filter: { age: { $gt: 40 } }, sort: { age: -1 }, projection: { name: 1, _id: 0 }, limit: 5 });
    expect(found.body).toEqual({ documents: [{ name: "grace" }, { name: "alan" }] });
    expect((await call("updateMany", { ...scope, filter: { age: { $gt: 40 } }, update: { $inc: { age: 1 } } })).body).toEqual({ matchedCount: 2, modifiedCount: 2 });
    expect((await call("updateOne", { ...scope, filter: { _id: 7 }, update: { $set: { age: 1 } } })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    expect((await call("replaceOne", { ...scope, filter: { _id: 7 }, replacement: { name: "hopper" } })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    const grouped = await call("aggregate", { ...scope, pipeline: [{ $group: { _id: null, total: { $sum: "$age" } } }] });
    expect(grouped.body).toEqual({ documents: [{ _id: null, total: 36 + 42 }] });
    expect((await call("deleteOne", { ...scope, filter: { _id: 7 } })).body).toEqual({ deletedCount: 1 });
    expect((await call("deleteMany", { ...scope, filter: {} })).body).toEqual({ deletedCount: 2 });
  });

  it("speaks canonical Extended JSON when asked, relaxed JSON otherwise", async () => {
    const { call, handler, scope } = await gateway();
    const id = new ObjectId();
    await call("insertOne", { ...scope, document: { _id: id, n: 1, at: new Date(0) } });
    const canonical = await call("find", scope);
    expect(canonical.headers.get("Content-Type")).toBe("application/ejson");
    expect(canonical.text).toContain('"n":{"$numberInt":"1"}');
    const relaxed = await handler(new Request(`${BASE}/action/find`, { method: "POST", headers: { "api-key": KEY, "Content-Type": "application/json" }, body: JSON.stringify(scope) }));
    expect(relaxed.headers.get("Content-Type")).toBe("application/json");
    expect(await relaxed.json()).toEqual({ documents: [{ _id: { $oid: id.toHexString() }, n: 1, at: { $date: "1970-01-01T00:00:00Z" } }] });
  });

  it("reports duplicates as 409 with the key, outages as 503 and bugs as a bare 500", async () => {
    const errors: unknown[] = [];
    const { call, memory, scope } = await gateway({ onError: (error) => errors.push(error) });
    await memory.createIndexes({ database: "app", collection: "people" }, [{ keys: [["email", 1]], unique: true }]);
    await call("insertOne", { ...scope, document: { email: "a@x" } });
    expect(await call("insertOne", { ...scope, document: { email: "a@x" } })).toMatchObject({ status: 409, body: { error_code: "DuplicateKey", keyValue: { email: "a@x" } } });

    const failing = (error: Error): Driver => Object.assign(Object.create(memory), { find: async () => Promise.reject(error) });
    const unavailable = createDataApiHandler(failing(new DatabaseUnavailableError("down: 10.0.0.5")), { apiKeys: [KEY], onError: (e) => errors.push(e) });
    const broken = createDataApiHandler(failing(new Error("secret internals")), { apiKeys: [KEY], onError: (e) => errors.push(e) });
    const post = (handler: typeof unavailable) =>
      handler(new Request(`${BASE}/action/find`, { method: "POST", headers: { "api-key": KEY }, body: JSON.stringify(scope) }));
    const down = await post(unavailable);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ error: "the database is unavailable", error_code: "DatabaseUnavailable" });
    const bug = await post(broken);
    expect(bug.status).toBe(500);
    expect(await bug.text()).not.toContain("secret");
    expect(errors.map((e) => (e as Error).message)).toEqual(["down: 10.0.0.5", "secret internals"]);
  });
});

describe("data-api driver", () => {
  const t: Target = { collection: "people" };
  const driverWith = (fetch: typeof globalThis.fetch, timeoutMs = 30_000) =>
    new DataApiDriver({ url: `${BASE}/`, databaseName: "app", dataSource: "mongodb-atlas", apiKey: KEY, fetch, timeoutMs });
  const answering = (status: number, body: unknown): typeof fetch => async () => new Response(JSON.stringify(body), { status });

  it("is what the registry builds for https:// and http:// URIs, from DATA_API_KEY and DATA_API_SOURCE", async () => {
    const seen: Request[] = [];
    const memory = await MemoryDriver.open({ databaseName: "everest" });
    const handler = createDataApiHandler(memory, { apiKeys: [KEY], dataSource: "cluster0" });
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const request = new Request(input, init);
      seen.push(request.clone());
      return handler(request);
    };
    for (const uri of [BASE, "http://10.0.0.5:8080/data/v1"]) {
      const driver = await createDriver(uri, { databaseName: "app", settings: { DATA_API_KEY: KEY, DATA_API_SOURCE: "cluster0" }, services: { fetch } });
      expect(driver.kind).toBe("data-api");
      await driver.insertMany(t, [{ n: 1 }]);
    }
    expect(await memory.count({ database: "app", collection: "people" }, {})).toBe(2);
    expect(seen.map((r) => r.url)).toEqual([`${BASE}/action/insertMany`, "http://10.0.0.5:8080/data/v1/action/insertMany"]);
    expect(await seen[0]!.json()).toMatchObject({ dataSource: "cluster0", database: "app", collection: "people" });
    await expect(createDriver(BASE, { databaseName: "app", settings: { DB_OPTIONS: { timeoutMS: "soon" } } })).rejects.toThrow(/timeoutMS/);
  });

  it("is not ready while the gateway refuses its database, and ready once it serves it", async () => {
    const memory = await MemoryDriver.open({ databaseName: "everest" });
    const gatewayHandler = createDataApiHandler(memory, { apiKeys: [KEY], databases: ["app"] });
    const fetch: typeof globalThis.fetch = async (input, init) => gatewayHandler(new Request(input, init));
    const ready = async (database: string) => {
      const api = createHandler({ DB_URI: BASE, DB_NAME: database, DATA_API_KEY: KEY, HEALTH_ENDPOINT: "health", DOMAIN: { people: {} } }, { services: { fetch } });
      const response = await api(new Request("http://everest.test/health/ready"));
      await api.app.close();
      return { status: response.status, body: await response.json() };
    };
    expect(await ready("everest")).toEqual({ status: 503, body: { status: "unavailable", checks: { database: "unavailable" } } });
    expect(await ready("app")).toEqual({ status: 200, body: { status: "ok", checks: { database: "ok" } } });
  });

  it("does not start, and is not ready, while the gateway refuses a collection the settings use", async () => {
    const memory = await MemoryDriver.open({ databaseName: "app" });
    const settings = { DB_URI: BASE, DB_NAME: "app", DATA_API_KEY: KEY, HEALTH_ENDPOINT: "health", RATE_LIMIT_STORE: "database", DOMAIN: { people: { versioning: true } } } as const;
    const api = (collections: string[]) => {
      const gatewayHandler = createDataApiHandler(memory, { apiKeys: [KEY], databases: ["app"], collections });
      return createHandler(settings, { services: { fetch: async (input, init) => gatewayHandler(new Request(input, init)) } });
    };
    for (const [served, refused] of [[["people", "people_versions"], "_everest_rate_limits"], [["people", "_everest_rate_limits"], "people_versions"]] as const) {
      const partial = api([...served]);
      await expect(partial.app.open()).rejects.toThrow(`collection '${refused}' is not served`);
      expect((await partial(new Request("http://everest.test/health/ready"))).status).toBe(503);
      await partial.app.close();
    }
    const whole = api(["people", "people_versions", "_everest_rate_limits"]);
    await whole.app.open();
    expect((await whole(new Request("http://everest.test/health/ready"))).status).toBe(200);
    await whole.app.close();
  });

  it("has its collection's changes recorded by a gateway restarted since it asked, from the first write on", async () => {
    const before = await MemoryDriver.open({ databaseName: "everest" });
    let gatewayNow = createDataApiHandler(before, { apiKeys: [KEY] });
    const driver = driverWith(async (input, init) => gatewayNow(new Request(input, init)));
    await driver.changes.record(t);
    await driver.insertMany(t, [{ _id: 1 }]);
    expect(await before.changes.head("app")).toMatch(/\.1$/);
    // Restarted: the driver behind it has been asked nothing (an in-memory set, as MongoDB's log keeps it).
    const after = await MemoryDriver.open({ databaseName: "everest" });
    gatewayNow = createDataApiHandler(after, { apiKeys: [KEY] });
    const start = await after.changes.head("app");
    await driver.insertMany(t, [{ _id: 2 }]);
    await driver.updateOne(t, { _id: 2 }, { $set: { n: 1 } });
    const read = await after.changes.read("app", start, 10);
    expect(read.expired ? [] : read.records.map(({ op, id }) => [op, id])).toEqual([["insert", 2], ["update", 2]]);
    // A collection nobody asked to record is not recorded.
    await driver.insertMany({ collection: "other" }, [{ _id: 3 }]);
    const later = await after.changes.read("app", start, 10);
    expect(later.expired ? [] : later.records.map(({ collection }) => collection)).toEqual(["people", "people"]);
  });

  it("sends a 'Bearer …' key as an Authorization header", async () => {
    let authorization: string | null = null;
    const driver = new DataApiDriver({
      url: BASE,
      databaseName: "app",
      dataSource: "mongodb-atlas",
      apiKey: "Bearer token-1",
      fetch: async (input, init) => {
        const request = new Request(input, init);
        authorization = request.headers.get("Authorization");
        expect(request.headers.has("api-key")).toBe(false);
        return new Response('{"documents": []}');
      },
      timeoutMs: 1000,
    });
    await driver.find(t, { filter: {} });
    expect(authorization).toBe("Bearer token-1");
  });

  it("reports an unreachable or unwilling gateway as unavailable", async () => {
    const refused: typeof fetch = async () => Promise.reject(new TypeError("fetch failed"));
    expect(await rejection(driverWith(refused).find(t, { filter: {} }))).toBeInstanceOf(DatabaseUnavailableError);
    for (const status of [401, 403, 502, 503, 504]) {
      expect(await rejection(driverWith(answering(status, { error: "no", error_code: "X" })).count(t, {})), String(status)).toBeInstanceOf(DatabaseUnavailableError);
    }
    const html: typeof fetch = async () => new Response("<html>Bad Gateway</html>", { status: 502 });
    expect(await rejection(driverWith(html).count(t, {}))).toBeInstanceOf(DatabaseUnavailableError);
  });

  it("gives up on a gateway that does not answer within timeoutMS", async () => {
    const silent: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)));
    expect(await rejection(driverWith(silent, 20).find(t, { filter: {} }))).toBeInstanceOf(DatabaseUnavailableError);
  });

  it("maps the gateway's refusals to the contract's errors", async () => {
    const duplicate = await rejection(driverWith(answering(409, { error: "dup", error_code: "DuplicateKey", keyValue: { email: "a@x" } })).insertMany(t, [{}]));
    expect(duplicate).toBeInstanceOf(DuplicateKeyError);
    expect((duplicate as DuplicateKeyError).keyValue).toEqual({ email: "a@x" });
    expect(await rejection(driverWith(answering(400, { error: "bad", error_code: "InvalidQuery" })).find(t, { filter: {} }))).toBeInstanceOf(InvalidQueryError);
    expect(await rejection(driverWith(answering(413, { error: "big", error_code: "ResponseTooLarge" })).find(t, { filter: {} }))).toBeInstanceOf(InvalidQueryError);
    // A Data API endpoint without everest's extensions: a deployment error, not the client's.
    const plain = await rejection(driverWith(answering(400, { error: "unknown action", error_code: "UnknownAction" })).createIndexes(t, [{ keys: [["a", 1]] }]));
    expect(plain).not.toBeInstanceOf(InvalidQueryError);
    expect((plain as Error).message).toMatch(/everest\.createIndexes/);
    expect(await rejection(driverWith(answering(200, { nothing: true })).find(t, { filter: {} }))).toBeInstanceOf(Error);
  });

  it("pages by position through everest's extension, and falls back to standard actions elsewhere", async () => {
    const bodies: Record<string, unknown>[] = [];
    const recording: typeof fetch = async (input, init) => {
      bodies.push(EJSON.parse(String(init?.body)) as Record<string, unknown>);
      if (String(input).endsWith("everest.estimatedCount")) return new Response(JSON.stringify({ error: "unknown", error_code: "UnknownAction" }), { status: 400 });
      return new Response(EJSON.stringify({ documents: [{ count: 3 }] }), { status: 200 });
    };
    const driver = driverWith(recording);
    await driver.find(t, { filter: { a: 1 }, sort: [["n", 1], ["_id", 1]], after: { n: 5, _id: 9 }, limit: 2 });
    // The standard filter holds the position too, so an endpoint without the extension pages right.
    expect(bodies[0]).toMatchObject({ filter: { $and: [{ a: 1 }, { $or: expect.any(Array) }] }, "everest.after": { n: 5, _id: 9 }, sort: { n: 1, _id: 1 } });
    expect(await driver.estimatedCount(t)).toBe(3);
    expect(Object.keys(bodies.at(-1)!)).toContain("pipeline");
  });

  it("carries regular expressions: operators keep their options and the operators beside them", async () => {
    const memory = await MemoryDriver.open({ databaseName: "app" });
    const driver = dataApiOver(memory, "app");
    await driver.insertMany(t, [{ name: "alice" }, { name: "Al" }, { name: "bob", pattern: /^b/m }]);
    const names = async (filter: Record<string, unknown>) => (await driver.find(t, { filter, sort: [["name", 1]] })).map((d) => d.name);
    expect(await names({ name: { $regex: "^al" } })).toEqual(["alice"]);
    expect(await names({ name: { $regex: "^al", $options: "i" } })).toEqual(["Al", "alice"]);
    expect(await names({ name: { $regex: "^al", $options: "i", $ne: "Al" } })).toEqual(["alice"]);
    expect(await names({ name: /^AL$/i })).toEqual(["Al"]);
    expect(await names({ name: { $not: /^a/i } })).toEqual(["bob"]);
    expect(await driver.count(t, { $or: [{ name: { $regex: "b$" } }] })).toBe(1);
    const [bob] = await driver.find(t, { filter: { name: "bob" } });
    expect(bob!.pattern).toEqual(/^b/m);
    expect(await rejection(driver.find(t, { filter: { name: { $regex: "a", $options: "g" } } }))).toBeInstanceOf(InvalidQueryError);
  });

  it.each([100_000, 1_200_000])("reads media through a gateway whose response cap (%i bytes) is below the driver's ranges", async (cap) => {
    const memory = await MemoryDriver.open({ databaseName: "app" });
    const driver = driverWith(inProcessFetch(createDataApiHandler(memory, { apiKeys: [KEY], maxResponseBytes: cap })));
    const data = new Uint8Array(1.5 * 1024 * 1024).map((_, i) => i % 253);
    const id = await driver.media().put(data, { filename: "pic.bin" });
    const whole = new Uint8Array(await new Response((await driver.media().get(id))!.read() as ReadableStream).arrayBuffer());
    expect(whole.length).toBe(data.length);
    expect(whole.every((byte, i) => byte === data[i])).toBe(true);
  });

  it("reads media larger than one response in ranges", async () => {
    const memory = await MemoryDriver.open({ databaseName: "app" });
    const driver = driverWith(inProcessFetch(createDataApiHandler(memory, { apiKeys: [KEY], maxResponseBytes: 2 * 1024 * 1024 })));
    const data = new Uint8Array(2.5 * 1024 * 1024).map((_, i) => i % 251);
    const id = await driver.media().put(data, { filename: "big.bin", contentType: "application/octet-stream" });
    const file = (await driver.media().get(id))!;
    expect(file.length).toBe(data.length);
    const whole = new Uint8Array(await new Response(file.read() as ReadableStream).arrayBuffer());
    // Compared here: vitest's deep equality walks megabytes one property at a time.
    expect(whole.length).toBe(data.length);
    expect(whole.every((byte, i) => byte === data[i])).toBe(true);
    const start = 1024 * 1024 - 3;
    const across = new Uint8Array(await new Response(file.read({ start, end: start + 9 }) as ReadableStream).arrayBuffer());
    expect(Array.from(across)).toEqual(Array.from(data.slice(start, start + 10)));
    const empty = await driver.media().put(new Uint8Array(0), {});
    expect(new Uint8Array(await new Response((await driver.media().get(empty))!.read() as ReadableStream).arrayBuffer())).toEqual(new Uint8Array(0));
    expect(await memory.media("app").get(id)).not.toBeNull();
  });
});

describe("HTTP: an unreachable database answers 503, and service resumes", () => {
  it("through the data-api driver", async () => {
    const memory = await MemoryDriver.open({ databaseName: "everest" });
    const gatewayHandler = createDataApiHandler(memory, { apiKeys: [KEY] });
    let reachable = false;
    const fetch: typeof globalThis.fetch = async (input, init) => {
      if (!reachable) throw new TypeError("fetch failed: ECONNREFUSED");
      return gatewayHandler(new Request(input, init));
    };
    const driver = new DataApiDriver({ url: BASE, databaseName: "everest", dataSource: "mongodb-atlas", apiKey: KEY, fetch, timeoutMs: 30_000 });
    const records: LogRecord[] = [];
    const handler = createHandler({ DOMAIN: { people: {} } }, { driver, logger: createLogger((record) => records.push(record)) });
    try {
      const down = await handler(new Request("http://api.test/people"));
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ _status: "ERR", _error: { code: 503 } });
      expect(records.map((record) => [record.level, (record.error as Error).name])).toEqual([["ERROR", "DatabaseUnavailableError"]]);
      reachable = true;
      const up = await handler(new Request("http://api.test/people"));
      expect(up.status).toBe(200);
      expect((await up.json())._items).toEqual([]);
    } finally {
      await handler.app.close();
    }
  });
});
