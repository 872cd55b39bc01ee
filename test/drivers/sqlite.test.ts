// The sqlite driver on this runtime's SQLite (node:sqlite needs Node ≥ 22.5; CI runs this file
// with a newer Node when the machine's is older, and Bun with bun:sqlite). Without one, the
// tests are reported as skipped and the start-up error is checked instead.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ObjectId } from "bson";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { createDriver } from "../../src/drivers/registry.ts";
import { bunPort } from "../../src/drivers/sqlite/bun.ts";
import { SqliteDriver } from "../../src/drivers/sqlite/driver.ts";
import { nodePort } from "../../src/drivers/sqlite/node.ts";
import type { SqlPort } from "../../src/drivers/sqlite/port.ts";
import type { SyncDatabase } from "../../src/drivers/sqlite/sync.ts";
import { createHandler, type Handler } from "../../src/handler.ts";
import type { Settings } from "../../src/settings/types.ts";
import type { Doc, Driver, Filter, Sort, Target } from "../../src/drivers/types.ts";
import { runDriverConformance } from "./conformance.ts";
import { random, randomDocuments } from "./support/random-documents.ts";
import { hasSqlite, tempFiles } from "./support/sqlite.ts";
import { readSse } from "../support/sse.ts";

const tempFile = tempFiles();

const available = await hasSqlite();

describe.skipIf(available)("sqlite driver without node:sqlite", () => {
  it("refuses to start, naming the Node version it needs", async () => {
    await expect(createDriver(`sqlite:${await tempFile()}`, { databaseName: "everest", settings: {} })).rejects.toThrow(/Node 22\.5/);
  });
});

describe.skipIf(!available)("sqlite driver", () => {
  runDriverConformance("sqlite", async (settings = {}) => createDriver(`sqlite:${await tempFile()}`, { databaseName: "everest", settings }));
});

/** Copies of documents, sharing their (immutable) bson values. */
function copies<T>(value: T): T {
  return (Array.isArray(value) ? value.map((doc) => ({ ...doc })) : { ...value }) as T;
}

/** The result of an operation, or the class of the error it failed with. */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return await run();
  } catch (error) {
    return { error: (error as Error).constructor.name };
  }
}

describe.skipIf(!available)("sqlite driver: answers agree with the memory driver", () => {
  const t: Target = { collection: "mixed" };
  const rand = random(20261123);
  const oids = Array.from({ length: 3 }, () => new ObjectId());
  const scalars: unknown[] = [0, 1, 2, 2.5, -1, "a", "b", "bb", "", true, false, null, new Date(0), new Date(1000), ...oids];
  const { pick, value, document } = randomDocuments(rand, scalars);
  const condition = (): unknown => {
    const bound = () => pick(scalars.filter((s) => s !== null));
    switch (Math.floor(rand() * 12)) {
      case 0:
        return value();
      case 1:
        return { $in: [value(), value()] };
      case 2:
        return { [pick(["$gt", "$gte"])]: bound() };
      case 3:
        return { [pick(["$lt", "$lte"])]: bound() };
      case 4:
        return { [pick(["$gt", "$gte"])]: bound(), [pick(["$lt", "$lte"])]: bound() };
      case 5:
        return { $ne: value() };
      case 6:
        return { $nin: [value(), value()] };
      case 7:
        return { $exists: rand() < 0.5 };
      case 8:
        return { $size: Math.floor(rand() * 3) };
      case 9:
        return { $all: [pick(scalars), pick(scalars)] };
      case 10:
        return { $not: { [pick(["$gt", "$lte", "$eq"])]: bound() } };
      default:
        return { $elemMatch: rand() < 0.5 ? { $gte: bound() } : { x: pick(scalars) } };
    }
  };
  const filter = (depth = 0): Filter => {
    const field = () => pick(["v", "o.x", "o", "missing"]);
    const r = rand();
    if (depth < 2 && r < 0.1) return { $or: [filter(depth + 1), filter(depth + 1)] };
    if (depth < 2 && r < 0.15) return { $nor: [filter(depth + 1)] };
    if (depth < 2 && r < 0.2) return { $and: [filter(depth + 1), filter(depth + 1)] };
    return { [field()]: condition() };
  };

  // Generous: a busy machine runs these many operations slowly; nothing here measures time.
  it("finds, counts, sorts and pages the same documents through random filters and writes", { timeout: 120_000 }, async () => {
    const sqlite = await createDriver("sqlite::memory:", { databaseName: "everest", settings: {} });
    const memory = await MemoryDriver.open({ databaseName: "everest" });
    await sqlite.createIndexes(t, [{ keys: [["v", 1]] }, { keys: [["o.x", -1]] }]);
    const both = (run: (d: Driver) => Promise<unknown>) => Promise.all([outcome(() => run(sqlite)), outcome(() => run(memory))]);
    const seed = Array.from({ length: 200 }, () => ({ _id: new ObjectId(), ...document() }));
    await both((d) => d.insertMany(t, copies(seed)));
    const compare = async () => {
      for (let i = 0; i < 150; i++) {
        const f = filter();
        const [a, b] = await both((d) => d.find(t, { filter: f }));
        expect(a, JSON.stringify(f)).toEqual(b);
        const [ca, cb] = await both((d) => d.count(t, f));
        expect(ca, JSON.stringify(f)).toEqual(cb);
        const page = { filter: f, sort: [["v", pick([1, -1] as const)]] as Sort, skip: 2, limit: 5 };
        const [pa, pb] = await both((d) => d.find(t, page));
        // Ties and the types sorted only approximately (arrays, documents) may order differently; the set is the same.
        const ids = (docs: unknown) => (Array.isArray(docs) ? docs.map((doc: Doc) => String(doc._id)).sort() : docs);
        if (JSON.stringify(f).includes("[")) expect(ids(pa), JSON.stringify(page)).toHaveLength((ids(pb) as string[]).length);
      }
    };
    await compare();
    for (let i = 0; i < 200; i++) {
      const target = pick(seed)._id;
      const r = rand();
      const [v, replacement] = [value(), document()];
      if (r < 0.4) await both((d) => d.updateOne(t, { _id: target }, { $set: { v } }));
      else if (r < 0.6) await both((d) => d.replaceOne(t, { _id: target }, copies(replacement)));
      else if (r < 0.8) await both((d) => d.deleteOne(t, { _id: target }));
      else {
        const doc = { _id: new ObjectId(), ...document() };
        seed.push(doc);
        await both((d) => d.insertMany(t, [copies(doc)]));
      }
    }
    await compare();
    expect(await both((d) => d.deleteMany(t, { v: { $gte: 1 } }))).toEqual([expect.any(Number), expect.any(Number)]);
    await compare();
    await sqlite.close();
  });

  it("sorts the scalar types everest stores in MongoDB's order", async () => {
    const sqlite = await createDriver("sqlite::memory:", { databaseName: "everest", settings: {} });
    const oid = new ObjectId();
    // MongoDB: null and missing < numbers < strings < ObjectIds < booleans < dates.
    const ordered: unknown[] = [null, -1, 0, 2.5, 3, "", "a", "b", oid, false, true, new Date(0), new Date(1000)];
    const docs = [...ordered].reverse().map((v) => ({ _id: new ObjectId(), v }));
    await sqlite.insertMany(t, docs);
    expect((await sqlite.find(t, { filter: {}, sort: [["v", 1]] })).map((doc) => doc.v)).toEqual(ordered);
    expect((await sqlite.find(t, { filter: {}, sort: [["v", -1]] })).map((doc) => doc.v)).toEqual([...ordered].reverse());
    await sqlite.close();
  });

});

describe.skipIf(!available)("sqlite driver: keyset reads", () => {
  const t: Target = { collection: "keyset" };
  const BY_V: Sort = [["v", 1], ["_id", 1]];

  it("seek the order's index to the position: a range on it, never an OFFSET or a sort", async () => {
    const sqlite = (await createDriver("sqlite::memory:", { databaseName: "everest", settings: {} })) as SqliteDriver;
    await sqlite.createIndexes(t, [{ keys: BY_V, name: "by_v", orderOnly: true }]);
    const port = (sqlite as unknown as { port: SqlPort }).port;
    const plans: string[] = [];
    const explaining: SqlPort = { ...port, all: async (statement) => {
      if (statement.sql.includes("ORDER BY")) plans.push(...(await port.all({ ...statement, sql: `EXPLAIN QUERY PLAN ${statement.sql}` })).map((row) => String(row.detail)));
      return port.all(statement);
    } };
    (sqlite as unknown as { port: SqlPort }).port = explaining;
    await sqlite.insertMany(t, Array.from({ length: 50 }, (_, i) => ({ _id: new ObjectId(), v: i % 7 })));
    for (const sort of [BY_V, [["v", -1], ["_id", -1]] as Sort]) {
      plans.length = 0;
      const [first] = await sqlite.find(t, { filter: { v: { $ne: 3 } }, sort, after: null, limit: 1 });
      await sqlite.find(t, { filter: { v: { $ne: 3 } }, sort, after: { v: first!.v, _id: first!._id }, limit: 5 });
      expect(plans.join("\n")).toMatch(/^SEARCH .* USING INDEX .*by_v\/order \(<expr>[<>]\?\)$/m);
      expect(plans.join("\n")).not.toMatch(/TEMP B-TREE/);
    }
    await sqlite.close();
  });

  it("walk the same pages as the memory driver, through random writes", { timeout: 120_000 }, async () => {
    const rand = random(3232);
    const oids = Array.from({ length: 3 }, () => new ObjectId());
    const scalars: unknown[] = [-1, 0, 2, 2.5, "", "a", "B", "é", true, false, null, new Date(-5000), new Date(0), new Date(1000), ...oids];
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const document = (): Doc => {
      const doc: Doc = { _id: new ObjectId() };
      if (rand() < 0.85) doc.v = pick(scalars);
      if (rand() < 0.7) doc.o = { x: pick(scalars) };
      return doc;
    };
    const sqlite = await createDriver("sqlite::memory:", { databaseName: "everest", settings: {} });
    const memory = await MemoryDriver.open({ databaseName: "everest" });
    const sorts: Sort[] = [BY_V, [["v", -1], ["_id", -1]], [["o.x", 1], ["v", -1], ["_id", 1]]];
    await sqlite.createIndexes(t, [{ keys: sorts[0]!, name: "a", orderOnly: true }, { keys: sorts[2]!, name: "b", orderOnly: true }]);
    const seed = Array.from({ length: 150 }, document);
    await Promise.all([sqlite, memory].map((d) => d.insertMany(t, copies(seed))));
    const walk = async (d: Driver, sort: Sort, filter: Filter): Promise<string[]> => {
      const seen: string[] = [];
      let after: Doc | null = null;
      for (;;) {
        const page = await d.find(t, { filter, sort, after, limit: 7 });
        seen.push(...page.map((doc) => String(doc._id)));
        if (page.length < 7) return seen;
        after = page[page.length - 1]!;
      }
    };
    for (let round = 0; round < 8; round++) {
      for (const sort of sorts) {
        const filter = pick<Filter>([{}, { v: { $gte: 0 } }, { "o.x": { $ne: null } }]);
        expect(await walk(sqlite, sort, filter), JSON.stringify({ sort, filter })).toEqual(await walk(memory, sort, filter));
      }
      const doc = document();
      const victim = pick(seed)._id;
      await Promise.all([sqlite, memory].map(async (d) => {
        await d.insertMany(t, [copies(doc)]);
        await d.updateOne(t, { _id: victim }, { $set: { v: scalars[round] } });
      }));
    }
    await sqlite.close();
  });
});

describe.skipIf(!available)("sqlite driver: hostile filters", () => {
  const t: Target = { collection: "things" };
  const odd = ["a'b", 'a"b', "a\\b", "a;DROP TABLE x", "$weird", "a\u0000b", "é", "a b", "0", "a..b", "x".repeat(5000)];
  const filters: Filter[] = [
    { n: { $in: Array.from({ length: 5000 }, (_, i) => i) } },
    { n: { $nin: Array.from({ length: 5000 }, (_, i) => `s${i}`) } },
    ...odd.map((name) => ({ [name]: 1 })),
    ...odd.map((name) => ({ [`${name}.deeper`]: { $gt: 0 } })),
    { s: "x'); DROP TABLE things; --" },
    { s: "\u0000" },
    { s: "y".repeat(100_000) },
    Array.from({ length: 300 }).reduce<Filter>((inner) => ({ $and: [inner, { n: { $gte: 0 } }] }), { n: 1 }),
    Array.from({ length: 300 }).reduce<Filter>((inner) => ({ $or: [inner, { n: -1 }] }), { n: 1 }),
    Array.from({ length: 120 }, (_, i) => [`f${i}`, { $ne: i }]).reduce<Filter>((all, [k, v]) => ({ ...all, [k as string]: v }), {}),
  ];

  it("answers each as the memory driver does, stores nothing half and raises no SQL error", { timeout: 120_000 }, async () => {
    const sqlite = await createDriver("sqlite::memory:", { databaseName: "everest", settings: {} });
    const memory = await MemoryDriver.open({ databaseName: "everest" });
    const docs: Doc[] = [{ n: 1, s: "x'); DROP TABLE things; --" }, { n: 2, "a'b": 1, 'a"b': 1, $weird: 1, "a\u0000b": 1, é: 1 }, { n: 3, s: "\u0000" }].map((doc) => ({ _id: new ObjectId(), ...doc }));
    for (const d of [sqlite, memory]) await d.insertMany(t, copies(docs));
    for (const f of filters) {
      const [a, b] = await Promise.all([outcome(() => sqlite.find(t, { filter: f })), outcome(() => memory.find(t, { filter: f }))]);
      expect(a, JSON.stringify(f).slice(0, 200)).toEqual(b);
      expect(await outcome(() => sqlite.count(t, f))).toEqual(await outcome(() => memory.count(t, f)));
    }
    const refused = await outcome(() => sqlite.insertMany(t, [{ n: 10 }, { _id: (docs[0] as Doc)._id, n: 11 }]));
    expect(refused).toEqual({ error: "DuplicateKeyError" });
    expect(await sqlite.count(t, {})).toBe(3);
    await sqlite.close();
  });
});

const WRITER = join(import.meta.dirname, "support/sqlite-writer.ts");
const ROOT = join(import.meta.dirname, "../..");

/** Starts a writer process on `path`; `acked` gets the last step each writer had acknowledged. */
function writer(path: string, name: string, acked: Map<string, number>): { child: ChildProcess; steps: (n: number) => Promise<boolean> } {
  const child = spawn(process.execPath, ["--import", "tsx", WRITER, path, name], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  const waiting: Array<{ n: number; resolve: (reached: boolean) => void }> = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const [word, who, step] = line.split(" ");
    if (word !== "ack") return;
    acked.set(who!, Number(step));
    for (const wait of waiting.splice(0)) if (Number(step) >= wait.n) wait.resolve(true);
    else waiting.push(wait);
  });
  let exited = false;
  child.once("exit", () => {
    exited = true;
    waiting.splice(0).forEach((wait) => wait.resolve(false));
  });
  // A writer that died before it was asked fails the test at once, not at its timeout.
  return { child, steps: (n) => new Promise((resolve) => (exited ? resolve(false) : waiting.push({ n, resolve }))) };
}

describe.skipIf(!available || !!(globalThis as { Bun?: unknown }).Bun)("sqlite driver: crashes", () => {
  it("SIGKILL during writes from two processes loses no acknowledged write", { timeout: 120_000 }, async () => {
    const path = await tempFile();
    const acked = new Map<string, number>();
    for (const round of [0, 1, 2]) {
      const writers = ["a", "b"].map((name) => writer(path, `${name}${round}`, acked));
      for (const [i, w] of writers.entries()) expect(await w.steps(20 + 15 * i)).toBe(true);
      for (const { child } of writers) {
        const gone = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await gone;
      }
      const driver = await createDriver(`sqlite:${path}`, { databaseName: "everest", settings: {} });
      const t = { collection: "acks" };
      for (const [name, step] of acked) {
        expect(await driver.count(t, { writer: name, step: { $lte: step } })).toBe(step + 1);
        const [counter] = await driver.find(t, { filter: { _id: `${name}:counter` } });
        expect(counter!.step).toBeGreaterThanOrEqual(step);
      }
      await driver.close();
    }
  });
});

/** A connection of the test's own on a file, so it can lock the file or cap its size, and a port over it. */
async function connection(path: string): Promise<{ db: SyncDatabase; port: SqlPort }> {
  if ((globalThis as { Bun?: unknown }).Bun) {
    const { Database } = (await import("bun:sqlite" as string)) as { Database: new (path: string, options: object) => SyncDatabase };
    const db = new Database(path, { create: true, strict: true });
    return { db, port: bunPort(db) };
  }
  const { DatabaseSync } = (await import("node:sqlite" as string)) as { DatabaseSync: new (path: string) => SyncDatabase };
  const db = new DatabaseSync(path);
  return { db, port: nodePort(db) };
}

describe.skipIf(!available)("sqlite driver: an unavailable database answers 503, stores nothing half, and service resumes", () => {
  const settings: Settings = { RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { things: { schema: { n: { type: "integer" }, text: { type: "string" } } } } };
  const post = (body: unknown) => new Request("http://x/things", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const total = async (handler: Handler) => ((await (await handler(new Request("http://x/things"))).json()) as { _meta: { total: number } })._meta.total;
  const refused = async (response: Response) => {
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ _status: "ERR", _error: { code: 503 } });
  };

  /** An API over a new file holding one document, and another connection holding the file's write lock. */
  const lockedByAnother = async (given: Settings) => {
    const path = await tempFile();
    const handler = createHandler(given, { driver: await createDriver(`sqlite:${path}`, { databaseName: "everest", settings: {} }) });
    expect((await handler(post({ n: 1 }))).status).toBe(201);
    const other = await connection(path);
    other.db.exec("BEGIN EXCLUSIVE");
    return { handler, other };
  };

  it("while another process holds the write lock (SQLITE_BUSY after busy_timeout); reads go on", { timeout: 60_000 }, async () => {
    const { handler, other } = await lockedByAnother(settings);
    await refused(await handler(post([{ n: 2 }, { n: 3 }])));
    expect(await total(handler)).toBe(1);
    other.db.exec("ROLLBACK");
    expect((await handler(post([{ n: 2 }, { n: 3 }]))).status).toBe(201);
    expect(await total(handler)).toBe(3);
    other.db.close();
    await handler.app.close();
  });

  it("waits for another process's lock without stopping the process: other requests are answered meanwhile, and the write once the lock is free", { timeout: 60_000 }, async () => {
    const { handler, other } = await lockedByAnother({ ...settings, HEALTH_ENDPOINT: "health" });
    const waiting = handler(post({ n: 2 }));
    // Had the write's wait blocked the process, none of these would be answered before it gave up.
    expect((await handler(new Request("http://x/health"))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await handler(new Request("http://x/health"))).status).toBe(200);
    other.db.exec("ROLLBACK");
    expect((await waiting).status).toBe(201);
    expect(await total(handler)).toBe(2);
    other.db.close();
    await handler.app.close();
  });

  it("fails every write queued while another process keeps the lock with the first, not each after 5 s of its own", { timeout: 60_000 }, async () => {
    const { handler, other } = await lockedByAnother(settings);
    const first = handler(post({ n: 2 }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = handler(post({ n: 3 }));
    await refused(await first);
    // Free now: a write that waited on a clock of its own would get the lock and be stored.
    other.db.exec("ROLLBACK");
    await refused(await second);
    expect(await total(handler)).toBe(1);
    expect((await handler(post({ n: 4 }))).status).toBe(201);
    other.db.close();
    await handler.app.close();
  });

  it("when the disk is full (SQLITE_FULL, the file capped at its size)", { timeout: 60_000 }, async () => {
    const { db, port } = await connection(await tempFile());
    const handler = createHandler(settings, { driver: await SqliteDriver.open(port, "everest") });
    expect((await handler(post({ n: 1 }))).status).toBe(201);
    const [{ page_count: pages }] = db.prepare("PRAGMA page_count").all() as [{ page_count: number }];
    db.exec(`PRAGMA max_page_count = ${pages}`);
    const many = Array.from({ length: 50 }, (_, n) => ({ n, text: "x".repeat(2000) }));
    await refused(await handler(post(many)));
    expect(await total(handler)).toBe(1);
    db.exec("PRAGMA max_page_count = 1073741823");
    expect((await handler(post(many))).status).toBe(201);
    expect(await total(handler)).toBe(51);
    await handler.app.close();
  });
});

describe.skipIf(!available)("sqlite driver: kept collection counts", () => {
  const t: Target = { collection: "people" };
  const docs = (n: number) => Array.from({ length: n }, (_, i) => ({ _id: new ObjectId(), i }));
  /** The count as every row tested (a filter SQL cannot answer alone), beside the kept one. */
  const counts = async (driver: Driver) => [await driver.count(t, {}), await driver.count(t, { $expr: { $gte: ["$i", 0] } })];

  it("agree with the rows through the writes of two connections and of SQL outside the driver", async () => {
    const path = await tempFile();
    const open = () => createDriver(`sqlite:${path}`, { databaseName: "everest", settings: {} });
    const [a, b] = [await open(), await open()];
    await a.insertMany(t, docs(5));
    await b.insertMany(t, docs(3));
    expect(await b.deleteOne(t, { i: 0 })).toBe(true);
    expect(await a.deleteMany(t, { i: { $gte: 2 } })).toBe(4);
    await expect(a.insertMany(t, [{ _id: new ObjectId(), i: 7 }, ...(await a.find(t, { filter: {}, limit: 1 }))])).rejects.toThrow();
    expect(await counts(a)).toEqual([3, 3]);
    expect(await counts(b)).toEqual([3, 3]);
    const { db } = await connection(path);
    db.exec(`DELETE FROM "everest.people" WHERE rowid IN (SELECT rowid FROM "everest.people" LIMIT 1)`);
    expect(await counts(a)).toEqual([2, 2]);
    db.close();
    await Promise.all([a.close(), b.close()]);
  });

  it("count the rows of a table an older everest made, and keep its count from the first write on", async () => {
    const path = await tempFile();
    const open = () => createDriver(`sqlite:${path}`, { databaseName: "everest", settings: {} });
    const before = await open();
    await before.insertMany(t, docs(4));
    await before.close();
    const { db } = await connection(path);
    db.exec(`DROP TRIGGER "everest.people#inserted"; DROP TRIGGER "everest.people#deleted"; DELETE FROM _everest_counts`);
    db.close();
    const after = await open();
    expect(await counts(after)).toEqual([4, 4]);
    await after.insertMany(t, docs(2));
    expect(await after.deleteOne(t, {})).toBe(true);
    expect(await counts(after)).toEqual([5, 5]);
    await after.close();
  });
});

// The change log's table dropped (or the file restored without it) while its epoch row stays: the
// log made anew numbers from 1 again, and under the old epoch a client resuming from an old
// position read on from there, silently missing changes. A new log gets a new epoch.
describe.skipIf(!available)("sqlite driver: a change log made anew", () => {
  it("refuses a position of the log it replaced, over HTTP", { timeout: 60_000 }, async () => {
    const path = await tempFile();
    const settings: Settings = { CHANGE_FEED: true, RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { things: { schema: { n: { type: "integer" } } } } };
    const serve = async () => createHandler(settings, { driver: await createDriver(`sqlite:${path}`, { databaseName: "everest", settings: {} }) });
    const post = (n: number) => new Request("http://x/things", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ n }) });
    const resume = (position: string) => new Request("http://x/things", { headers: { Accept: "text/event-stream", "Last-Event-ID": position } });
    const first = await serve();
    const stream = readSse(await first(new Request("http://x/things", { headers: { Accept: "text/event-stream" } })));
    for (let n = 0; n < 5; n++) expect((await first(post(n))).status).toBe(201);
    let position: string | undefined;
    for (let n = 0; n < 5; n++) position = (await stream.expect("insert")).id;
    expect(position).toMatch(/\.5$/);
    await stream.close();
    await first.app.close();

    const other = await connection(path);
    other.db.exec('DROP TABLE "everest.$changes"');
    other.db.close();
    const second = await serve();
    for (let n = 0; n < 8; n++) expect((await second(post(n))).status).toBe(201);
    const resumed = await second(resume(position!));
    expect(resumed.status).toBe(400);
    await resumed.body?.cancel();
    await second.app.close();
  });
});
