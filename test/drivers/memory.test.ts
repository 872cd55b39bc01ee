import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { afterAll, describe, expect, it, vi } from "vitest";
import { NodeFileAccess } from "../../adapters/node-files.ts";
import { retentionOf } from "../../src/drivers/change-log.ts";
import { journalPath, MemoryDriver } from "../../src/drivers/memory/index.ts";
import { SortedList } from "../../src/drivers/memory/sorted-list.ts";
import { createDriver } from "../../src/drivers/registry.ts";
import {
  DuplicateKeyError,
  InvalidQueryError,
  STORED_VERSION,
  type Doc,
  type DriverSettings,
  type FileAccess,
  type Filter,
  type FindQuery,
  type SharedDoc,
  type Target,
  versionOf,
} from "../../src/drivers/types.ts";
import { rejection, runDriverConformance } from "./conformance.ts";
import { random, randomDocuments } from "./support/random-documents.ts";

const directories: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "everest-memory-"));
  directories.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function journalAt(path: string, files: FileAccess = new NodeFileAccess(), settings: DriverSettings = {}): Promise<MemoryDriver> {
  return MemoryDriver.open({ databaseName: "everest", journal: { files, path }, retention: retentionOf(settings) });
}



runDriverConformance("memory", (settings = {}) => MemoryDriver.open({ databaseName: "everest", retention: retentionOf(settings) }));
runDriverConformance("memory with journal", async (settings) => journalAt(join(await tempDir(), "journal.jsonl"), undefined, settings));

describe("memory driver: index use", () => {
  const t: Target = { collection: "things" };
  const SIZE = 2000;
  const build = async (): Promise<{ driver: MemoryDriver; docs: Doc[] }> => {
    const driver = await MemoryDriver.open({ databaseName: "everest" });
    await driver.createIndexes(t, [{ keys: [["n", 1]] }, { keys: [["group", 1]] }, { keys: [["meta.code", 1]], unique: true }]);
    const docs = Array.from({ length: SIZE }, (_, i) => ({ n: i, group: `g${i % 50}`, meta: { code: `c${i}` }, free: i }));
    await driver.insertMany(t, docs);
    return { driver, docs };
  };
  /** Documents examined and full scans made by one operation. */
  const measure = async <T>(driver: MemoryDriver, run: () => Promise<T>) => {
    const before = { ...driver.stats };
    const result = await run();
    return {
      result,
      examined: driver.stats.documentsExamined - before.documentsExamined,
      fullScans: driver.stats.fullScans - before.fullScans,
    };
  };

  it("answers equality on _id by looking at one document", async () => {
    const { driver, docs } = await build();
    const m = await measure(driver, () => driver.find(t, { filter: { _id: docs[1234]!._id } }));
    expect(m.result.map((d) => d.n)).toEqual([1234]);
    expect(m).toMatchObject({ examined: 1, fullScans: 0 });
  });

  it("answers equality, $in and dotted paths from declared indexes", async () => {
    const { driver } = await build();
    const byGroup = await measure(driver, () => driver.find(t, { filter: { group: "g7" } }));
    expect(byGroup.result).toHaveLength(40);
    expect(byGroup).toMatchObject({ examined: 40, fullScans: 0 });
    const byIn = await measure(driver, () => driver.count(t, { group: { $in: ["g1", "g2"] } }));
    expect(byIn).toMatchObject({ result: 80, examined: 80, fullScans: 0 });
    const byCode = await measure(driver, () => driver.find(t, { filter: { "meta.code": "c77" } }));
    expect(byCode.result.map((d) => d.n)).toEqual([77]);
    expect(byCode.examined).toBe(1);
  });

  it("answers ranges from the sorted part of an index, kept up to date by writes", async () => {
    const { driver } = await build();
    const range = { n: { $gte: 100, $lt: 110 } };
    const first = await measure(driver, () => driver.find(t, { filter: range }));
    expect(first.result.map((d) => d.n)).toEqual([100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
    expect(first).toMatchObject({ examined: 10, fullScans: 0 });
    await driver.updateOne(t, { n: 105 }, { $set: { n: 5000 } });
    await driver.deleteOne(t, { n: 101 });
    await driver.insertMany(t, [{ n: 100.5 }]);
    const after = await measure(driver, () => driver.find(t, { filter: range, sort: [["n", 1]] }));
    expect(after.result.map((d) => d.n)).toEqual([100, 100.5, 102, 103, 104, 106, 107, 108, 109]);
    expect(after.examined).toBe(9);
    const open = await measure(driver, () => driver.count(t, { n: { $gt: 1995 } }));
    expect(open).toMatchObject({ result: 5, examined: 5 });
  });

  it("picks the narrowest index among the conditions the core ANDs together", async () => {
    const { driver } = await build();
    const filter = { $and: [{ group: "g3" }, { n: { $lt: 200 } }, { _deleted: { $ne: true } }] };
    const m = await measure(driver, () => driver.find(t, { filter }));
    expect(m.result.map((d) => d.n)).toEqual([3, 53, 103, 153]);
    expect(m).toMatchObject({ examined: 40, fullScans: 0 });
    const narrower = await measure(driver, () => driver.count(t, { group: "g3", n: { $gte: 100, $lt: 104 } }));
    expect(narrower).toMatchObject({ result: 1, examined: 4 });
  });

  it("answers an $or whose branches are all indexed from the union of their candidates", async () => {
    const { driver } = await build();
    const m = await measure(driver, () => driver.count(t, { $or: [{ n: 5 }, { group: "g7" }] }));
    expect(m).toMatchObject({ result: 41, examined: 41, fullScans: 0 });
  });

  it("uses the index for a leading $match of a pipeline and for conditional writes", async () => {
    const { driver, docs } = await build();
    const agg = await measure(driver, () => driver.aggregate(t, [{ $match: { group: "g9" } }, { $count: "n" }]));
    expect(agg).toMatchObject({ result: [{ n: 40 }], examined: 40 });
    const write = await measure(driver, () => driver.updateOne(t, { _id: docs[9]!._id, n: 9 }, { $set: { seen: true } }));
    expect(write).toMatchObject({ result: true, examined: 1 });
  });

  it("reads an unfiltered page at any depth by looking at its own documents, and past removed ones when there are", async () => {
    const { driver } = await build();
    const deep = await measure(driver, () => driver.find(t, { filter: {}, skip: 1500, limit: 10 }));
    expect(deep.result.map((d) => d.n)).toEqual([1500, 1501, 1502, 1503, 1504, 1505, 1506, 1507, 1508, 1509]);
    expect(deep).toMatchObject({ examined: 10, fullScans: 0 });
    expect((await driver.find(t, { filter: {}, skip: 1995 })).map((d) => d.n)).toEqual([1995, 1996, 1997, 1998, 1999]);
    await driver.deleteOne(t, { n: 3 });
    await driver.deleteOne(t, { n: 1501 });
    await driver.insertMany(t, [{ n: 2000 }]);
    // Natural order without 3 and 1501: the 1,500th document is now 1502.
    const after = await measure(driver, () => driver.find(t, { filter: {}, skip: 1500, limit: 3 }));
    expect(after.result.map((d) => d.n)).toEqual([1502, 1503, 1504]);
    expect(after.examined).toBe(1503);
    expect((await driver.find(t, { filter: {}, skip: 1996, limit: 5 })).map((d) => d.n)).toEqual([1998, 1999, 2000]);
    expect(await driver.find(t, { filter: {}, skip: 5000 })).toEqual([]);
  });

  it("scans everything for a condition no index covers", async () => {
    const { driver } = await build();
    const m = await measure(driver, () => driver.count(t, { free: 42 }));
    expect(m).toMatchObject({ result: 1, examined: SIZE, fullScans: 1 });
  });
});

describe("memory driver: indexed and unindexed answers agree", () => {
  const rand = random(20251121);
  const oids = Array.from({ length: 4 }, () => new ObjectId());
  const scalars: unknown[] = [0, 1, 2, 3, 5, 8, -1, 2.5, NaN, "a", "b", "bb", "c", "", true, false, null, new Date(0), new Date(1000), new Date(NaN), ...oids];
  const { pick, value, document } = randomDocuments(rand, scalars);
  const condition = (): unknown => {
    const bound = () => pick(scalars.filter((s) => s !== null));
    switch (Math.floor(rand() * 7)) {
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
        return { $eq: value() };
      default:
        return { $ne: value() };
    }
  };
  const filter = (): Filter => {
    const field = () => pick(["v", "o.x"]);
    if (rand() < 0.2) return { $or: [{ [field()]: condition() }, { [field()]: condition() }] };
    return { [field()]: condition() };
  };

  it("returns the same documents with and without indexes, through inserts, updates and deletes", async () => {
    const t: Target = { collection: "mixed" };
    const indexed = await MemoryDriver.open({ databaseName: "everest" });
    const plain = await MemoryDriver.open({ databaseName: "everest" });
    await indexed.createIndexes(t, [{ keys: [["v", 1]] }, { keys: [["o.x", -1]] }]);
    const both = async (run: (d: MemoryDriver) => Promise<unknown>) => Promise.all([run(indexed), run(plain)]);
    const seed = Array.from({ length: 300 }, () => ({ _id: new ObjectId(), ...document() }));
    await both((d) => d.insertMany(t, structuredClone(seed)));
    const compare = async () => {
      for (let i = 0; i < 150; i++) {
        const f = filter();
        const [a, b] = (await both((d) => d.find(t, { filter: f, sort: [["_id", 1]] }))) as [Doc[], Doc[]];
        expect(a, JSON.stringify(f)).toEqual(b);
        const [ca, cb] = await both((d) => d.count(t, f));
        expect(ca, JSON.stringify(f)).toBe(cb);
      }
    };
    await compare();
    expect(indexed.stats.indexScans).toBeGreaterThan(0);
    for (let i = 0; i < 300; i++) {
      const target = pick(seed)._id;
      const r = rand();
      if (r < 0.4) await both((d) => d.updateOne(t, { _id: target }, { $set: { v: value() } }));
      else if (r < 0.6) await both((d) => d.replaceOne(t, { _id: target }, document()));
      else if (r < 0.8) await both((d) => d.deleteOne(t, { _id: target }));
      else {
        const doc = { _id: new ObjectId(), ...document() };
        seed.push(doc);
        await both((d) => d.insertMany(t, [structuredClone(doc)]));
      }
    }
    await compare();
  });
});

describe("SortedList", () => {
  it("stays sorted through inserts and removals that split and merge chunks", () => {
    const rand = random(7);
    const list = new SortedList<number>((a, b) => a - b, 8);
    const reference: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const n = Math.floor(rand() * 100);
      if (rand() < 0.6 || reference.length === 0) {
        list.insert(n);
        reference.push(n);
        reference.sort((a, b) => a - b);
      } else {
        const present = reference.indexOf(n);
        expect(list.remove(n)).toBe(present >= 0);
        if (present >= 0) reference.splice(present, 1);
      }
    }
    expect(list.size).toBe(reference.length);
    expect([...list.between(() => true, () => false)]).toEqual(reference);
    const inRange = reference.filter((n) => n >= 20 && n < 40);
    expect([...list.between((n) => n >= 20, (n) => n >= 40)]).toEqual(inRange);
    expect(list.countBetween((n) => n >= 20, (n) => n >= 40)).toBe(inRange.length);
  });
});

describe("memory driver: refused queries", () => {
  const t: Target = { collection: "things" };
  const open = async () => {
    const driver = await MemoryDriver.open({ databaseName: "everest" });
    await driver.insertMany(t, [{ n: 1 }]);
    return driver;
  };

  it("refuses $where, $function and $accumulator wherever they appear", async () => {
    const driver = await open();
    const refused = [
      driver.find(t, { filter: { $where: "this.n == 1" } }),
      driver.count(t, { $and: [{ n: 1 }, { $where: "true" }] }),
      driver.deleteMany(t, { $or: [{ $where: "true" }] }),
      driver.updateOne(t, { $where: "true" }, { $set: { n: 2 } }),
      driver.aggregate(t, [{ $match: { $expr: { $function: { body: "function() { return true }", args: [], lang: "js" } } } }]),
      driver.aggregate(t, [{ $addFields: { x: { $function: { body: "function() { return 1 }", args: [], lang: "js" } } } }]),
      driver.aggregate(t, [{ $group: { _id: null, x: { $accumulator: { init: "function() {}", accumulate: "", accumulateArgs: [], merge: "", lang: "js" } } } }]),
    ];
    for (const promise of refused) expect(await rejection(promise)).toBeInstanceOf(InvalidQueryError);
    expect(await driver.find(t, { filter: {} })).toEqual([expect.objectContaining({ n: 1 })]);
  });

  it("refuses stages that would write collections behind the store's back", async () => {
    const driver = await open();
    expect(await rejection(driver.aggregate(t, [{ $out: "copy" }]))).toBeInstanceOf(InvalidQueryError);
    expect(await rejection(driver.aggregate(t, [{ $merge: { into: "copy" } }]))).toBeInstanceOf(InvalidQueryError);
  });

  it("reports malformed queries, updates and pipelines as invalid", async () => {
    const driver = await open();
    expect(await rejection(driver.find(t, { filter: { n: { $regex: "(" } } }))).toBeInstanceOf(InvalidQueryError);
    expect(await rejection(driver.find(t, { filter: {}, projection: { n: 1, m: 0 } }))).toBeInstanceOf(InvalidQueryError);
    expect(await rejection(driver.aggregate(t, [{ $nonsense: 1 }]))).toBeInstanceOf(InvalidQueryError);
    expect(await rejection(driver.updateOne(t, { n: 1 }, { $set: { _id: new ObjectId() } }))).toBeInstanceOf(InvalidQueryError);
  });
});

describe("memory driver: databases and indexes", () => {
  it("a target without database is the default database", async () => {
    const driver = await MemoryDriver.open({ databaseName: "main" });
    await driver.insertMany({ collection: "c" }, [{ n: 1 }]);
    expect(await driver.count({ database: "main", collection: "c" }, {})).toBe(1);
    expect(await driver.count({ database: "other", collection: "c" }, {})).toBe(0);
    const id = await driver.media().put(new Uint8Array([1]), {});
    expect(await driver.media("main").get(id)).not.toBeNull();
  });

  it("a unique index over duplicates throws DuplicateKeyError and leaves earlier indexes as they were", async () => {
    const driver = await MemoryDriver.open({ databaseName: "main" });
    const t = { collection: "c" };
    await driver.insertMany(t, [{ a: 1, b: 1 }, { a: 2, b: 1 }]);
    const error = await rejection(driver.createIndexes(t, [{ keys: [["a", 1]], unique: true }, { keys: [["b", 1]], unique: true }]));
    expect(error).toBeInstanceOf(DuplicateKeyError);
    expect((error as DuplicateKeyError).keyValue).toEqual({ b: 1 });
    await driver.insertMany(t, [{ a: 1, b: 2 }]);
    expect(await driver.count(t, { a: 1 })).toBe(2);
  });

  it("redefining an index under the same name replaces it", async () => {
    const driver = await MemoryDriver.open({ databaseName: "main" });
    const t = { collection: "c" };
    await driver.createIndexes(t, [{ keys: [["email", 1]], unique: true, name: "email" }]);
    await driver.insertMany(t, [{ email: "a" }]);
    expect(await rejection(driver.insertMany(t, [{ email: "a" }]))).toBeInstanceOf(DuplicateKeyError);
    await driver.createIndexes(t, [{ keys: [["email", 1]], name: "email" }]);
    await driver.insertMany(t, [{ email: "a" }]);
    expect(await driver.count(t, { email: "a" })).toBe(2);
  });

  it("compound unique indexes collide only on the whole combination, and report every field", async () => {
    const driver = await MemoryDriver.open({ databaseName: "main" });
    const t = { collection: "c" };
    await driver.createIndexes(t, [{ keys: [["a", 1], ["b", 1]], unique: true }]);
    await driver.insertMany(t, [{ a: 1, b: 1 }, { a: 1, b: 2 }, { a: 2, b: 1 }]);
    const error = await rejection(driver.insertMany(t, [{ a: 2, b: 1 }]));
    expect((error as DuplicateKeyError).keyValue).toEqual({ a: 2, b: 1 });
  });

  it("a unique index over an array field collides on any shared element", async () => {
    const driver = await MemoryDriver.open({ databaseName: "main" });
    const t = { collection: "c" };
    await driver.createIndexes(t, [{ keys: [["tags", 1]], unique: true }]);
    await driver.insertMany(t, [{ tags: ["a", "b"] }, { tags: ["c", "c"] }]);
    const error = await rejection(driver.insertMany(t, [{ tags: ["x", "b"] }]));
    expect((error as DuplicateKeyError).keyValue).toEqual({ tags: "b" });
  });

  // A single-field unique index answers from the field's lookup index (UniqueIndex.share), which
  // also keys whole arrays and missing values: those must not count as clashes.
  it("a unique index told apart from the lookup index on its field: whole arrays, sparse misses, updates", async () => {
    const driver = await MemoryDriver.open({ databaseName: "main" });
    const t = { collection: "c" };
    await driver.createIndexes(t, [{ keys: [["tags", 1]], unique: true }, { keys: [["code", 1]], unique: true, sparse: true }]);
    await driver.insertMany(t, [{ _id: 1, tags: ["x", "y"] }, { _id: 2, tags: [["x", "y"]] }, { _id: 3, tags: ["p"] }, { _id: 4, tags: ["q"] }, { _id: 5, tags: ["r"], code: null }]);
    expect(await driver.count(t, {})).toBe(5);
    expect(((await rejection(driver.insertMany(t, [{ tags: ["y"] }]))) as DuplicateKeyError).keyValue).toEqual({ tags: "y" });
    expect(((await rejection(driver.insertMany(t, [{ tags: ["s"], code: null }]))) as DuplicateKeyError).keyValue).toEqual({ code: null });
    await driver.updateOne(t, { _id: 1 }, { $set: { tags: ["x", "y", "z"], n: 1 } });
    await driver.updateOne(t, { _id: 1 }, { $set: { tags: ["z"] } });
    await driver.insertMany(t, [{ _id: 6, tags: ["x"] }]);
    expect(((await rejection(driver.updateOne(t, { _id: 6 }, { $set: { tags: ["z"] } }))) as DuplicateKeyError).keyValue).toEqual({ tags: "z" });
    await driver.deleteOne(t, { _id: 1 });
    await driver.updateOne(t, { _id: 6 }, { $set: { tags: ["z"] } });
    expect((await driver.find(t, { filter: { tags: "z" } })).map((d) => d._id)).toEqual([6]);
  });
});

// The store shares equal Dates between documents (DatePool in src/drivers/memory/values.ts).
describe("memory driver: shared values stay private", () => {
  it("a Date changed by a reader or a writer's caller changes no stored document", async () => {
    const driver = await MemoryDriver.open({ databaseName: "main" });
    const t = { collection: "c" };
    const stamp = new Date("2026-11-24T03:00:00Z");
    const [a, b] = [new ObjectId(), new ObjectId()];
    await driver.insertMany(t, [{ _id: a, _created: stamp, _updated: stamp }, { _id: b, _created: new Date(stamp), _updated: new Date(stamp) }]);
    stamp.setTime(0);
    const [first] = await driver.find(t, { filter: { _id: a } });
    (first!._created as Date).setTime(1);
    (first!._updated as Date).setTime(2);
    await driver.updateOne(t, { _id: b }, { $set: { _updated: new Date("2026-11-24T03:00:00Z"), n: 1 } });
    for (const id of [a, b]) {
      const [doc] = await driver.find(t, { filter: { _id: id } });
      expect([(doc!._created as Date).toISOString(), (doc!._updated as Date).toISOString()]).toEqual(["2026-11-24T03:00:00.000Z", "2026-11-24T03:00:00.000Z"]);
    }
    expect(await driver.count(t, { _created: new Date("2026-11-24T03:00:00Z") })).toBe(2);
  });

  it("a shared read hands out the stored versions, or copies naming them where a projection leaves fields out", async () => {
    const driver = await MemoryDriver.open({ databaseName: "main" });
    expect(driver.sharesVersions).toBe(true);
    const t = { collection: "c" };
    await driver.insertMany(t, [{ _id: 1, name: "a", place: { city: "Rome" } }, { _id: 2, name: "b" }]);
    const read = async (id: number, projection?: FindQuery["projection"]) => (await driver.find(t, { filter: { _id: id }, shared: true, projection }))[0] as SharedDoc;
    const first = await read(1);
    expect(await read(1)).toBe(first);
    expect(await read(1, { name: 1, place: 1 })).toBe(first);
    expect(versionOf(await read(2))).not.toBe(versionOf(first));
    // Copies where the projection leaves something out, naming the stored document they show.
    const projections: Array<FindQuery["projection"]> = [{ name: 1 }, { "place.city": 0 }];
    for (const projection of projections) {
      const projected = await read(1, projection);
      expect(projected).not.toBe(first);
      expect(versionOf(projected)).toBe(first);
    }
    const sorted = await driver.find(t, { filter: {}, shared: true, sort: [["name", -1]] });
    expect(versionOf(sorted[1]!)).toBe(first);
    await driver.updateOne(t, { _id: 1 }, { $set: { name: "c" } });
    const next = await read(1);
    expect(next).not.toBe(first);
    expect(first).toEqual({ _id: 1, name: "a", place: { city: "Rome" } });
    await driver.replaceOne(t, { _id: 1 }, { _id: 1, name: "d" });
    expect(await read(1)).not.toBe(next);
    // Reads that are not shared are copies the caller owns, marked with nothing.
    const own = (await driver.find(t, { filter: { _id: 1 } }))[0] as SharedDoc;
    expect(own[STORED_VERSION]).toBeUndefined();
    own.name = "changed";
    expect((await read(1)).name).toBe("d");
  });

  it("documents keep ids of every type apart, and ObjectIds equal by value find each other", async () => {
    const driver = await MemoryDriver.open({ databaseName: "main" });
    const t = { collection: "c" };
    const oid = new ObjectId();
    // The last one spells the key a number 0 has in the store (src/drivers/memory/values.ts).
    await driver.insertMany(t, [{ _id: oid }, { _id: oid.toHexString() }, { _id: `\u0000${oid.toHexString()}` }, { _id: 0 }, { _id: "0" }, { _id: "\u0001n:0" }]);
    expect(await driver.count(t, {})).toBe(6);
    expect((await driver.find(t, { filter: { _id: 0 } })).map((d) => d._id)).toEqual([0]);
    expect((await driver.find(t, { filter: { _id: "\u0001n:0" } })).map((d) => d._id)).toEqual(["\u0001n:0"]);
    expect((await driver.find(t, { filter: { _id: new ObjectId(oid.toHexString()) } })).map((d) => d._id)).toEqual([oid]);
    expect(await rejection(driver.insertMany(t, [{ _id: ObjectId.createFromHexString(oid.toHexString()) }]))).toBeInstanceOf(DuplicateKeyError);
  });
});

describe("createDriver", () => {
  const options = { databaseName: "everest", settings: {} };

  it("builds the memory driver for no URI, 'memory' and 'memory:'", async () => {
    for (const uri of [undefined, "memory", "memory:"]) {
      const driver = await createDriver(uri, options);
      expect(driver.kind).toBe("memory");
      await driver.insertMany({ collection: "c" }, [{ n: 1 }]);
      expect(await driver.count({ database: "everest", collection: "c" }, {})).toBe(1);
    }
  });

  it("builds a journaled memory driver for file: URIs", async () => {
    const dir = await tempDir();
    const services = { files: new NodeFileAccess() };
    for (const uri of [`file:${join(dir, "a.jsonl")}`, `file://${join(dir, "b.jsonl")}`]) {
      const driver = await createDriver(uri, { ...options, services });
      await driver.insertMany({ collection: "c" }, [{ n: 1 }]);
      await driver.close();
      const reopened = await createDriver(uri, { ...options, services });
      expect(await reopened.count({ collection: "c" }, {})).toBe(1);
      await reopened.close();
    }
    expect((await readdir(dir)).sort()).toEqual(["a.jsonl", "a.jsonl.lock", "b.jsonl", "b.jsonl.lock"]);
  });

  it("takes the journal's compaction thresholds from the settings", async () => {
    const path = join(await tempDir(), "c.jsonl");
    const settings = { JOURNAL_COMPACTION_RATIO: 2, JOURNAL_COMPACTION_MIN_SIZE: 2000 };
    const driver = await createDriver(`file:${path}`, { ...options, settings, services: { files: new NodeFileAccess() } });
    await driver.insertMany({ collection: "c" }, [{ _id: 1, n: 0 }]);
    for (let n = 1; n <= 100; n++) await driver.updateOne({ collection: "c" }, { _id: 1 }, { $set: { n } });
    await vi.waitFor(async () => expect(await readFile(path, "utf8")).toContain('"op":"snapshot"'));
    await driver.close();
    expect((await stat(path)).size).toBeLessThan(4000);
  });

  it("reads the journal path from relative, absolute and URL forms of file: URIs", () => {
    expect(journalPath("file:data/db.jsonl")).toBe("data/db.jsonl");
    expect(journalPath("file:/srv/db.jsonl")).toBe("/srv/db.jsonl");
    expect(journalPath("file:///srv/my%20db.jsonl")).toBe("/srv/my db.jsonl");
    expect(journalPath("file:///C:/data/db.jsonl")).toBe("C:/data/db.jsonl");
    expect(() => journalPath("file:")).toThrow(/names no journal file/);
  });

  it("refuses a file: URI when the runtime gives no file access", async () => {
    await expect(createDriver("file:/tmp/x.jsonl", options)).rejects.toThrow(/NodeFileAccess/);
  });

  it("names the scheme and the supported ones for an unknown URI", async () => {
    await expect(createDriver("bogus://host/db", options)).rejects.toThrow(/'bogus:'.*memory:/);
    await expect(createDriver("localhost", options)).rejects.toThrow(/no scheme/);
  });
});

describe("memory driver: $in and $nin", () => {
  const rand = random(20261129);
  const oids = Array.from({ length: 3 }, () => new ObjectId());
  const scalars: unknown[] = [0, 1, 2.5, NaN, "a", "ab", "b", "", true, false, null, new Date(0), new Date(1000), ...oids];
  const { pick, value, document } = randomDocuments(rand, scalars);
  const list = (): unknown[] => Array.from({ length: Math.floor(rand() * 5) }, () => (rand() < 0.15 ? pick([/^a/, /b$/]) : value()));

  it("match what mingo's own operators match, and a top-level array equal to an element as MongoDB does", async () => {
    const { compileFilter } = await import("../../src/drivers/memory/mingo.ts");
    const { Context } = await import("mingo/core");
    const query = await import("mingo/operators/query");
    const { Query } = await import("mingo/query");
    const { isEqual } = await import("mingo/util");
    const reference = Context.init({ query });
    for (let i = 0; i < 400; i++) {
      const doc = document();
      const operator = pick(["$in", "$nin"]);
      const field = pick(["v", "o.x", "missing"]);
      const values = list();
      if (Array.isArray(doc[field]) && rand() < 0.5) values.push(doc[field]);
      const filter = { [field]: { [operator]: values } };
      const mingos = new Query(filter, { context: reference }).test(doc);
      const whole = field === "v" && Array.isArray(doc.v) && values.some((value) => isEqual(value, doc.v));
      expect(compileFilter(filter)(doc), `${JSON.stringify(filter)} on ${JSON.stringify(doc)}`).toBe(operator === "$in" ? mingos || whole : mingos && !whole);
    }
  });

  it("find a list field by the whole list, as plain equality does", async () => {
    const t: Target = { collection: "lists" };
    const driver = await MemoryDriver.open({ databaseName: "everest" });
    await driver.insertMany(t, [{ l: [0, 0], k: "a" }, { l: [0, 1], k: "b" }, { l: [[0, 0], 1], k: "c" }, { k: "d" }]);
    const keys = async (filter: Filter) => (await driver.find(t, { filter, sort: [["k", 1]] })).map((doc) => doc.k);
    expect(await keys({ l: [0, 0] })).toEqual(["a", "c"]);
    expect(await keys({ l: { $in: [[0, 0]] } })).toEqual(["a", "c"]);
    expect(await keys({ l: { $in: [[0, 0], [0, 1]] } })).toEqual(["a", "b", "c"]);
    expect(await keys({ l: { $nin: [[0, 0]] } })).toEqual(["b", "d"]);
  });

  it("hash the list once per filter, not once per document tested", async () => {
    const { HashMap } = await import("mingo/util");
    const t: Target = { collection: "many" };
    const driver = await MemoryDriver.open({ databaseName: "everest" });
    const docs = Array.from({ length: 200 }, (_, i) => ({ _id: new ObjectId(), n: i }));
    await driver.insertMany(t, docs.map((doc) => ({ ...doc })));
    const hashed = vi.spyOn(HashMap.prototype, "set");
    try {
      const found = await driver.find(t, { filter: { _id: { $in: docs.map((doc) => doc._id) } } });
      expect(found).toHaveLength(200);
      // 200 ids hashed once; mingo's own $in hashed them for each of the 200 documents (40,000).
      expect(hashed.mock.calls.length).toBeLessThan(1_000);
    } finally {
      hashed.mockRestore();
    }
  });
});
