// The mongodb driver against MONGODB_URI (CI starts the emulator from ../shared); without it
// these tests are reported as skipped.
import { retentionOf } from "../../src/drivers/change-log.ts";
import { ChangeStreamLog } from "../../src/drivers/mongodb/change-streams.ts";
import { createServer, connect, type Server, type Socket } from "node:net";
import { Decimal128, Double, Long, ObjectId } from "bson";
import { type BulkWriteResult, Collection, MongoBulkWriteError, MongoClient, MongoNetworkError, MongoServerError } from "mongodb";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { clientOptions, MongoDriver } from "../../src/drivers/mongodb/index.ts";
import { createDriver } from "../../src/drivers/registry.ts";
import { createHandler } from "../../src/handler.ts";
import type { Settings } from "../../src/settings/types.ts";
import { createLogger } from "../../src/logging.ts";
import { DatabaseUnavailableError, DuplicateKeyError, InvalidPositionError, InvalidQueryError, type Target } from "../../src/drivers/types.ts";
import { MONGODB_EMULATED, rejection, runDriverConformance } from "./conformance.ts";
import { incrementInProcesses } from "./support/incrementers.ts";

const uri = process.env.MONGODB_URI;


const fresh = (collection = "c"): Target => ({ database: `mongo_${new ObjectId().toHexString()}`, collection });

/** A TCP relay to the database that can be cut and restored, to play an outage. */
class Relay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly upstream: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.upstream.port, this.upstream.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

describe("mongodb driver: settings", () => {
  it("is what the registry builds for mongodb:// and mongodb+srv:// URIs, without connecting", async () => {
    const driver = await createDriver("mongodb://127.0.0.1:1/app", { databaseName: "app", settings: {} });
    expect(driver).toBeInstanceOf(MongoDriver);
    await driver.close();
    await expect(createDriver("mongodb+srv://cluster.invalid/app", { databaseName: "app", settings: {} })).resolves.toBeInstanceOf(MongoDriver);
  });

  it("bounds server selection, passes DB_OPTIONS and DB_WRITE_CONCERN, and drops pymongo-only options", () => {
    expect(clientOptions({})).toMatchObject({ serverSelectionTimeoutMS: 3000, connectTimeoutMS: 3000 });
    const options = clientOptions({
      DB_OPTIONS: { connect: true, tz_aware: true, uuidRepresentation: "standard", appName: "everest", serverSelectionTimeoutMS: 500 },
      DB_WRITE_CONCERN: { w: "majority" },
    });
    expect(options).toMatchObject({ appName: "everest", serverSelectionTimeoutMS: 500, writeConcern: { w: "majority" } });
    for (const key of ["connect", "tz_aware", "uuidRepresentation"]) expect(options).not.toHaveProperty(key);
    // MongoClient refuses options it does not know, so what is left must all be known to it.
    expect(() => new MongoClient("mongodb://127.0.0.1:1", options)).not.toThrow();
  });
});

describe.skipIf(!uri)("mongodb driver", () => {
  runDriverConformance(
    "mongodb",
    async (settings = {}) => new MongoDriver({ uri: uri!, databaseName: "everest", client: { serverSelectionTimeoutMS: 2000 }, retention: retentionOf(settings) }),
    {
      emulated: MONGODB_EMULATED,
      // MongoDB stamps ETags with random values, and a standalone server updates many documents one by one.
      randomStamps: true,
      allOrNothing: false,
    },
  );

  describe("specifics", () => {
    let driver: MongoDriver;
    let client: MongoClient;
    beforeAll(async () => {
      driver = new MongoDriver({ uri: uri!, databaseName: "everest" });
      client = await new MongoClient(uri!).connect();
    });
    afterAll(async () => {
      await driver.close();
      await client.close();
    });

    it("loses no increment when three processes increment one counter at once (the server's findOneAndUpdate)", { timeout: 120_000 }, async () => {
      const database = `mongo_${new ObjectId().toHexString()}`;
      await driver.insertMany({ database, collection: "counters" }, [{ _id: "c", n: 0 }]);
      await incrementInProcesses(uri!, database, 100, ["a", "b", "c"]);
      expect((await driver.find({ database, collection: "counters" }, { filter: { _id: "c" } }))[0]!.n).toBe(300);
    });

    it("records what a standalone server changed before an update of many failed half way, and reports the failure", async () => {
      const t = fresh();
      await driver.changes.record(t);
      await driver.insertMany(t, [{ _id: 1, n: 1 }, { _id: 2, n: 2 }]);
      const start = await driver.changes.head(t.database);
      // Without transactions the documents are updated one by one: the second one's update refused.
      const real = Collection.prototype.findOneAndUpdate;
      let calls = 0;
      const partly = vi.spyOn(Collection.prototype, "findOneAndUpdate").mockImplementation(function (this: Collection, ...args: unknown[]) {
        if (this.collectionName === t.collection && ++calls === 2) return Promise.reject(new MongoServerError({ message: "E11000 duplicate key error", code: 11000, keyValue: { n: 12 } }));
        return (real as (...a: unknown[]) => unknown).apply(this, args) as never;
      });
      try {
        expect(await rejection(driver.updateMany(t, {}, { $inc: { n: 10 } }))).toBeInstanceOf(DuplicateKeyError);
      } finally {
        partly.mockRestore();
      }
      const read = await driver.changes.read(t.database, start, 10);
      expect(read.expired ? [] : read.records.map(({ op, id, before, after }) => ({ op, id, before, after }))).toEqual([{ op: "update", id: 1, before: { _id: 1, n: 1 }, after: { _id: 1, n: 11 } }]);
    });

    it("starts its change log anew, under a new epoch, when the log was dropped while it ran", async () => {
      const t = fresh();
      await driver.changes.record(t);
      await driver.insertMany(t, [{ _id: 1 }]);
      const before = await driver.changes.head(t.database);
      expect(before).toMatch(/\.1$/);
      await client.db(t.database).collection("_everest_feed").drop();
      // The write stores its document and its record: no error after the document is stored.
      await driver.insertMany(t, [{ _id: 2 }]);
      const after = await driver.changes.head(t.database);
      expect(after.split(".")[0]).not.toBe(before.split(".")[0]);
      // Numbered on from the change collection's last record, which the new one must not collide with.
      expect(after.split(".")[1]).toBe("2");
      await expect(driver.changes.read(t.database, before, 10)).rejects.toBeInstanceOf(InvalidPositionError);
      await driver.insertMany(t, [{ _id: 3 }]);
      const read = await driver.changes.read(t.database, after, 10);
      expect(read.expired ? [] : read.records.map(({ op, id }) => ({ op, id }))).toEqual([{ op: "insert", id: 3 }]);
    });

    it("returns everest's bson classes, in documents, aggregations and duplicate-key values", async () => {
      const t = fresh();
      const id = new ObjectId();
      await driver.createIndexes(t, [{ keys: [["ref", 1]], unique: true }]);
      await driver.insertMany(t, [{ _id: id, ref: new ObjectId(), price: Decimal128.fromString("1.5") }, { ref: 2 }]);
      const [found] = await driver.find(t, { filter: { _id: id } });
      expect(found!._id).toBeInstanceOf(ObjectId);
      expect(found!.ref).toBeInstanceOf(ObjectId);
      expect(found!.price).toBeInstanceOf(Decimal128);
      const [aggregated] = await driver.aggregate(t, [{ $match: { _id: id } }]);
      expect(aggregated!._id).toBeInstanceOf(ObjectId);
      const error = await rejection(driver.updateOne(t, { ref: 2 }, { $set: { ref: found!.ref } }));
      expect(error).toBeInstanceOf(DuplicateKeyError);
      expect((error as DuplicateKeyError).keyValue.ref).toBeInstanceOf(ObjectId);
    });

    it("reports every field of a compound unique index a bulk insert broke", async () => {
      const t = fresh();
      await driver.createIndexes(t, [{ keys: [["a", 1], ["b", 1]], unique: true, name: "a_b" }]);
      await driver.insertMany(t, [{ a: 1, b: 1 }]);
      const error = await rejection(driver.insertMany(t, [{ a: 1, b: 2 }, { a: 1, b: 1 }]));
      expect((error as DuplicateKeyError).keyValue).toEqual({ a: 1, b: 1 });
      expect(await driver.count(t, {})).toBe(1);
    });

    it("redefining an index (same name, or same keys under another name) replaces it", async () => {
      const t = fresh();
      await driver.createIndexes(t, [{ keys: [["email", 1]], unique: true, name: "email" }]);
      await driver.insertMany(t, [{ email: "a" }]);
      expect(await rejection(driver.insertMany(t, [{ email: "a" }]))).toBeInstanceOf(DuplicateKeyError);
      await driver.createIndexes(t, [{ keys: [["email", 1]], name: "email" }]);
      await driver.insertMany(t, [{ email: "a" }]);
      await driver.createIndexes(t, [{ keys: [["email", 1]], sparse: true, name: "email_sparse" }]);
      const names = (await client.db(t.database).collection(t.collection).indexes()).map((index) => index.name);
      expect(names.sort()).toEqual(["_id_", "email_sparse"]);
    });

    it("creates 2dsphere indexes for geo queries", async () => {
      const t = fresh();
      await driver.createIndexes(t, [{ keys: [["location", "2dsphere"]] }]);
      await driver.insertMany(t, [{ name: "near", location: { type: "Point", coordinates: [0, 0] } }, { name: "far", location: { type: "Point", coordinates: [90, 45] } }]);
      const near = await driver.find(t, { filter: { location: { $near: { $geometry: { type: "Point", coordinates: [0.1, 0.1] }, $maxDistance: 50_000 } } } });
      expect(near.map((doc) => doc.name)).toEqual(["near"]);
    });

    it("reads GridFS files written by Eve, whose content type is a top-level field", async () => {
      const database = fresh().database!;
      const _id = new ObjectId();
      const db = client.db(database);
      await db.collection("fs.files").insertOne({ _id, length: 3, chunkSize: 261120, uploadDate: new Date(), filename: "eve.txt", contentType: "text/plain" });
      await db.collection("fs.chunks").insertOne({ files_id: _id, n: 0, data: Buffer.from("abc") });
      const file = await driver.media(database).get(_id.toHexString());
      expect(file).toMatchObject({ filename: "eve.txt", contentType: "text/plain", length: 3 });
      expect(await new Response(file!.read() as ReadableStream).text()).toBe("abc");
      await driver.media(database).delete(_id.toHexString());
      expect(await db.collection("fs.chunks").countDocuments({ files_id: _id })).toBe(0);
    });

    it("writes GridFS files as Eve does, the content type at the file document's top level", async () => {
      const database = fresh().database!;
      const id = await driver.media(database).put(new TextEncoder().encode("abc"), { filename: "a.txt", contentType: "text/plain" });
      const stored = await client.db(database).collection("fs.files").findOne({ _id: new ObjectId(id) });
      expect(stored).toMatchObject({ filename: "a.txt", contentType: "text/plain", length: 3 });
      expect(await driver.media(database).get(id)).toMatchObject({ contentType: "text/plain" });
    });

    it("stores a whole number past int32 as int64, as pymongo stores a Python int, and reads it back as a number", async () => {
      const t = fresh();
      const big = 3_000_000_000;
      const raw = client.db(t.database).collection(t.collection);
      const longs = async (field: string) => raw.countDocuments({ [field]: { $type: "long" } });
      await driver.insertMany(t, [{ n: 1, a: big, list: [1, -big], sub: { x: big, y: 2.5 } }]);
      expect(await longs("a")).toBe(1);
      expect(await longs("list")).toBe(1);
      expect(await longs("sub.x")).toBe(1);
      expect(await raw.countDocuments({ n: { $type: "int" }, "sub.y": { $type: "double" } })).toBe(1);
      const one = async () => (await driver.find(t, { filter: { n: 1 } }))[0];
      expect(await one()).toMatchObject({ a: big, list: [1, -big], sub: { x: big, y: 2.5 } });
      await driver.updateOne(t, { n: 1 }, { $set: { b: big + 1 } });
      expect(await longs("b")).toBe(1);
      await driver.findOneAndUpdate(t, { n: 1 }, { $inc: { c: big } });
      expect(await longs("c")).toBe(1);
      await driver.updateMany(t, { n: 1 }, { $set: { d: -big } });
      expect(await longs("d")).toBe(1);
      await driver.replaceOne(t, { n: 1 }, { ...(await one())!, e: big, f: 1e300 });
      expect(await longs("e")).toBe(1);
      expect(await raw.countDocuments({ f: { $type: "double" } })).toBe(1);
      expect(await one()).toMatchObject({ a: big, b: big + 1, c: big, d: -big, e: big, f: 1e300 });
    });

    it("a PATCH merging a sub-document and a soft delete, over HTTP, leave the BSON types of the values they do not change", async () => {
      const t = fresh("people");
      const raw = client.db(t.database).collection(t.collection);
      const id = new ObjectId();
      // As pymongo stores Eve's data: a float that holds a whole number, a small Int64.
      await raw.insertOne({ _id: id, price: new Double(10), stock: Long.fromNumber(3), sub: { weight: new Double(2), count: Long.fromNumber(4) } });
      const settings: Settings = { DB_NAME: t.database, SOFT_DELETE: true, ITEM_METHODS: ["GET", "PATCH", "DELETE"], DOMAIN: { people: { allow_unknown: true, schema: { price: { type: "float" }, sub: { type: "dict", allow_unknown: true } } } } };
      const handler = createHandler(settings, { driver: new MongoDriver({ uri: uri!, databaseName: t.database! }), logger: createLogger(() => undefined) });
      const item = `http://api.test/people/${id}`;
      const kept = { _id: id, price: { $type: "double" }, stock: { $type: "long" }, "sub.weight": { $type: "double" }, "sub.count": { $type: "long" } };
      try {
        const etag = (await handler(new Request(item))).headers.get("etag")!;
        const patch = await handler(new Request(item, { method: "PATCH", headers: { "If-Match": etag, "Content-Type": "application/json" }, body: JSON.stringify({ sub: { note: "x" } }) }));
        expect(patch.status).toBe(200);
        expect(await raw.countDocuments({ ...kept, "sub.note": "x" })).toBe(1);
        const merged = (await handler(new Request(item))).headers.get("etag")!;
        expect((await handler(new Request(item, { method: "DELETE", headers: { "If-Match": merged } }))).status).toBe(204);
        expect(await raw.countDocuments({ ...kept, _deleted: true })).toBe(1);
      } finally {
        await handler.app.close();
      }
    });

    it("refuses what the server refuses as an invalid query", async () => {
      const t = fresh();
      await driver.insertMany(t, [{ n: 1 }]);
      expect(await rejection(driver.aggregate(t, [{ $bogus: {} }]))).toBeInstanceOf(InvalidQueryError);
      expect(await rejection(driver.updateOne(t, { n: 1 }, { $set: { _id: new ObjectId() } }))).toBeInstanceOf(InvalidQueryError);
    });
  });

  describe("outages", () => {
    const upstream = new URL(uri ?? "mongodb://127.0.0.1:27017");
    const relay = new Relay({ host: upstream.hostname, port: Number(upstream.port || 27017) });
    let driver: MongoDriver;
    const t = fresh();
    const driverUri = () => `mongodb://127.0.0.1:${relay.port}/?directConnection=true`;
    beforeAll(async () => {
      await relay.start();
      driver = new MongoDriver({
        uri: driverUri(),
        databaseName: "everest",
        // Above the 500 ms the mongodb package waits between checks of a server it lost.
        client: { serverSelectionTimeoutMS: 2000, connectTimeoutMS: 2000 },
      });
    });
    afterAll(async () => {
      await driver.close();
      await relay.stop();
    });

    it("reports an unreachable database as unavailable, and serves again once it is back", async () => {
      await driver.insertMany(t, [{ n: 1 }]);
      await relay.stop();
      expect(await rejection(driver.count(t, {}))).toBeInstanceOf(DatabaseUnavailableError);
      expect(await rejection(driver.insertMany(t, [{ n: 2 }]))).toBeInstanceOf(DatabaseUnavailableError);
      await relay.start();
      expect(await driver.count(t, {})).toBe(1);
    });

    it("answers HTTP requests 503 while the database is unreachable, and 200 once it is back", async () => {
      const handler = createHandler({ DOMAIN: { people: {} } }, { driver: new MongoDriver({ uri: driverUri(), databaseName: t.database!, client: { serverSelectionTimeoutMS: 2000 } }), logger: createLogger(() => undefined) });
      try {
        await relay.stop();
        const down = await handler(new Request("http://api.test/people"));
        expect(down.status).toBe(503);
        expect(await down.json()).toMatchObject({ _status: "ERR", _error: { code: 503 } });
        await relay.start();
        const up = await handler(new Request("http://api.test/people"));
        expect(up.status).toBe(200);
      } finally {
        await handler.app.close();
      }
    });

    // What insertMany throws when the connection is lost under it (retryWrites off, or a retry
    // that fails the same way): the network error wrapped in a MongoBulkWriteError, a subclass of
    // MongoServerError, which read as the server's refusal answered 400.
    it("answers a POST whose connection is lost during its insert 503, not 400", async () => {
      const handler = createHandler({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } } } }, { driver: new MongoDriver({ uri: driverUri(), databaseName: `${t.database}_cut` }), logger: createLogger(() => undefined) });
      const lost = new MongoBulkWriteError(new MongoNetworkError("connection 13 to 127.0.0.1:27017 closed"), {} as BulkWriteResult);
      const insert = vi.spyOn(Collection.prototype, "insertMany").mockRejectedValue(lost);
      try {
        const post = await handler(new Request("http://api.test/people", { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"name": "cut"}' }));
        expect(post.status).toBe(503);
        expect(await post.json()).toMatchObject({ _status: "ERR", _error: { code: 503 } });
      } finally {
        insert.mockRestore();
        await handler.app.close();
      }
    });

    it("answers 503 when the mongodb package lets a socket's own error through (EPIPE), not 500", async () => {
      const handler = createHandler({ DOMAIN: { people: {} } }, { driver: new MongoDriver({ uri: driverUri(), databaseName: `${t.database}_pipe` }), logger: createLogger(() => undefined) });
      // What Node throws for a write to a connection the server has just ended, unwrapped.
      const ended = Object.assign(new Error("This socket has been ended by the other party"), { code: "EPIPE" });
      const find = vi.spyOn(Collection.prototype, "find").mockImplementation(() => {
        throw ended;
      });
      try {
        const down = await handler(new Request("http://api.test/people"));
        expect(down.status).toBe(503);
        expect(await down.json()).toMatchObject({ _status: "ERR", _error: { code: 503 } });
      } finally {
        find.mockRestore();
        await handler.app.close();
      }
    });

    it("answers a change-feed stream 503 while the database is unreachable, not 500", async () => {
      const settings = { CHANGE_FEED: true, DOMAIN: { people: {} } };
      const handler = createHandler(settings, { driver: new MongoDriver({ uri: driverUri(), databaseName: `${t.database}_feed`, client: { serverSelectionTimeoutMS: 2000 } }), logger: createLogger(() => undefined) });
      try {
        // Opened and its collection bound first: the stream's own first read is the change log's.
        expect((await handler(new Request("http://api.test/people"))).status).toBe(200);
        await relay.stop();
        const down = await handler(new Request("http://api.test/people", { headers: { Accept: "text/event-stream" } }));
        expect(down.status).toBe(503);
        expect(await down.json()).toMatchObject({ _status: "ERR", _error: { code: 503 } });
      } finally {
        await relay.start();
        await handler.app.close();
      }
    });

    it("recovers when the database was already down at the first operation", async () => {
      await relay.stop();
      const late = new MongoDriver({ uri: driverUri(), databaseName: "everest", client: { serverSelectionTimeoutMS: 2000 } });
      try {
        expect(await rejection(late.find(t, { filter: {} }))).toBeInstanceOf(DatabaseUnavailableError);
        await relay.start();
        expect(await late.count(t, {})).toBe(1);
      } finally {
        await late.close();
      }
    });
  });
});

describe("mongodb change log: which one", () => {
  it("refuses a change-stream position that is not one before asking the server", async () => {
    const log = new ChangeStreamLog(() => Promise.reject(new Error("no server needed")), "everest");
    for (const bad of ["", "nonsense", "cs.", "cs.xyz", "0123456789ab.1"]) {
      await expect(log.read(undefined, bad, 1), bad).rejects.toBeInstanceOf(InvalidPositionError);
    }
  });

  it.skipIf(!uri)("uses the change collection on a standalone server (the emulator is one)", async () => {
    const driver = new MongoDriver({ uri: uri!, databaseName: "everest", client: { serverSelectionTimeoutMS: 2000 } });
    try {
      const target = { database: `feed_${Date.now()}`, collection: "people" };
      await driver.changes.record(target);
      await driver.insertMany(target, [{ _id: 1 }]);
      expect(await driver.changes.head(target.database)).toMatch(/^[0-9a-f]{12}\.1$/);
    } finally {
      await driver.close();
    }
  });
});
