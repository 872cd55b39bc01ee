import { mkdtemp, appendFile, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { afterAll, describe, expect, it } from "vitest";
import { NodeFileAccess } from "../../adapters/node-files.ts";
import { journalPath, MemoryDriver } from "../../src/drivers/memory/index.ts";
import { SortedList } from "../../src/drivers/memory/sorted-list.ts";
import { createDriver } from "../../src/drivers/registry.ts";
import {
  DatabaseUnavailableError,
  DuplicateKeyError,
  InvalidQueryError,
  type Doc,
  type FileAccess,
  type Filter,
  type Target,
} from "../../src/drivers/types.ts";
import { rejection, runDriverConformance } from "./conformance.ts";

const directories: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "everest-memory-"));
  directories.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function journalAt(path: string, files: FileAccess = new NodeFileAccess()): Promise<MemoryDriver> {
  return MemoryDriver.open({ databaseName: "everest", journal: { files, path } });
}


/** Lets queued microtasks and I/O callbacks run; no test depends on how long this takes. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

runDriverConformance("memory", () => MemoryDriver.open({ databaseName: "everest" }));
runDriverConformance("memory with journal", async () => journalAt(join(await tempDir(), "journal.jsonl")));

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

  it("scans everything for a condition no index covers", async () => {
    const { driver } = await build();
    const m = await measure(driver, () => driver.count(t, { free: 42 }));
    expect(m).toMatchObject({ result: 1, examined: SIZE, fullScans: 1 });
  });
});

/** A deterministic pseudo-random source, so a failing case can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

describe("memory driver: indexed and unindexed answers agree", () => {
  const rand = random(20251121);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const oids = Array.from({ length: 4 }, () => new ObjectId());
  const scalars: unknown[] = [0, 1, 2, 3, 5, 8, -1, 2.5, NaN, "a", "b", "bb", "c", "", true, false, null, new Date(0), new Date(1000), new Date(NaN), ...oids];
  const value = (): unknown => {
    const r = rand();
    if (r < 0.6) return pick(scalars);
    if (r < 0.8) return [pick(scalars), pick(scalars)];
    if (r < 0.9) return [];
    return { x: pick(scalars) };
  };
  const document = (): Doc => {
    const doc: Doc = {};
    if (rand() < 0.85) doc.v = value();
    if (rand() < 0.7) doc.o = rand() < 0.5 ? { x: value() } : [{ x: value() }, { y: 1 }];
    return doc;
  };
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
});

/** A FileAccess over a string, whose appends wait until the test lets them through. */
class HeldFiles implements FileAccess {
  text = "";
  readonly appends: string[] = [];
  private held: Array<() => void> = [];
  failAppends = false;
  failReplace = false;

  async readText(): Promise<string | null> {
    return this.text || null;
  }

  append(_path: string, text: string): Promise<void> {
    this.appends.push(text);
    return new Promise((resolve, reject) => {
      this.held.push(() => {
        if (this.failAppends) return reject(new Error("disk full"));
        this.text += text;
        resolve();
      });
    });
  }

  async replaceAtomically(_path: string, text: string): Promise<void> {
    if (this.failReplace) throw new Error("disk full");
    this.text = text;
  }

  /** Lets every append made so far complete. */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const complete of held) complete();
  }
}

describe("memory driver: journal", () => {
  const people: Target = { collection: "people" };
  const elsewhere: Target = { database: "other", collection: "things" };

  /** Everything a reopened driver must reproduce. */
  const state = async (driver: MemoryDriver, mediaIds: string[]) => ({
    people: await driver.find(people, { filter: {} }),
    elsewhere: await driver.find(elsewhere, { filter: {} }),
    media: await Promise.all(
      mediaIds.map(async (id) => {
        const file = await driver.media("other").get(id);
        return file && { ...file, read: undefined, bytes: Array.from(await (file.read() as Promise<Uint8Array>)) };
      }),
    ),
  });

  const populate = async (driver: MemoryDriver): Promise<string[]> => {
    await driver.createIndexes(people, [{ keys: [["email", 1]], unique: true, sparse: true }, { keys: [["age", 1]] }]);
    const ids = Array.from({ length: 5 }, () => new ObjectId());
    await driver.insertMany(people, ids.map((_id, i) => ({ _id, email: `p${i}@x`, age: 20 + i, since: new Date(Date.UTC(2020, i, 1)) })));
    await driver.replaceOne(people, { _id: ids[0] }, { email: "first@x", age: 99 });
    await driver.updateOne(people, { _id: ids[1] }, { $set: { "profile.city": "rome" }, $unset: { since: "" } });
    await driver.deleteOne(people, { _id: ids[2] });
    await driver.deleteMany(people, { age: { $gte: 24 } });
    await driver.insertMany(elsewhere, [{ n: 1 }, { n: 2 }]);
    await driver.deleteMany(elsewhere, {});
    await driver.insertMany(elsewhere, [{ n: 3 }]);
    const kept = await driver.media("other").put(new Uint8Array([1, 2, 3]), { filename: "a.txt", contentType: "text/plain" });
    const dropped = await driver.media("other").put(new Uint8Array([4]), {});
    await driver.media("other").delete(dropped);
    return [kept, dropped];
  };

  it("a reopened driver has the same documents, indexes and media", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    const mediaIds = await populate(driver);
    const before = await state(driver, mediaIds);
    await driver.close();
    expect(before.people).toHaveLength(2);
    expect(before.media[1]).toBeNull();

    const reopened = await journalAt(path);
    expect(await state(reopened, mediaIds)).toEqual(before);
    expect(await rejection(reopened.insertMany(people, [{ email: "p1@x" }]))).toBeInstanceOf(DuplicateKeyError);
    await reopened.close();
  });

  it("writes one canonical EJSON line per write, so types survive", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    await driver.insertMany(people, [{ _id: new ObjectId(), when: new Date(5) }]);
    await driver.updateOne(people, {}, { $set: { n: 1 } });
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('"$oid"');
    expect(lines[0]).toContain('"$date":{"$numberLong":"5"}');
    await driver.close();
  });

  it("ignores a torn last line and repairs the file so later writes replay", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    const mediaIds = await populate(driver);
    const before = await state(driver, mediaIds);
    await driver.close();
    await appendFile(path, '{"op":"insert","db":"everest","coll":"people","docs":[{"_id":{"$oid":');

    const reopened = await journalAt(path);
    expect(await state(reopened, mediaIds)).toEqual(before);
    expect((await readFile(path, "utf8")).endsWith("}\n")).toBe(true);
    await reopened.insertMany(people, [{ email: "late@x" }]);
    await reopened.close();

    const third = await journalAt(path);
    expect(await third.count(people, {})).toBe(3);
    await third.close();
  });

  it("ignores an unreadable complete last line", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    await driver.insertMany(people, [{ n: 1 }]);
    await driver.close();
    await appendFile(path, "garbage\n");
    const reopened = await journalAt(path);
    expect(await reopened.count(people, {})).toBe(1);
    await reopened.close();
  });

  it("refuses to start from a journal damaged before its last line", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    await driver.insertMany(people, [{ n: 1 }]);
    await driver.insertMany(people, [{ n: 2 }]);
    await driver.close();
    const [first, second] = (await readFile(path, "utf8")).trimEnd().split("\n");
    await writeFile(path, `${first}\ngarbage\n${second}\n`);
    await expect(journalAt(path)).rejects.toThrow(/line 2/);
  });

  it("compaction rewrites the journal as the current state, equivalent on reopening", async () => {
    const dir = await tempDir();
    const path = join(dir, "journal.jsonl");
    const driver = await journalAt(path);
    const mediaIds = await populate(driver);
    for (let i = 0; i < 20; i++) await driver.updateOne(elsewhere, {}, { $set: { n: i } });
    const before = await state(driver, mediaIds);
    const linesBefore = (await readFile(path, "utf8")).trimEnd().split("\n").length;

    await driver.compact();
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    // people: indexes + documents; other: documents; one media file.
    expect(lines).toHaveLength(4);
    expect(lines.length).toBeLessThan(linesBefore);
    expect(await readdir(dir)).toEqual(["journal.jsonl"]);
    await driver.insertMany(people, [{ email: "after@x" }]);
    await driver.close();

    const reopened = await journalAt(path);
    const after = await state(reopened, mediaIds);
    expect(after.elsewhere).toEqual(before.elsewhere);
    expect(after.media).toEqual(before.media);
    expect(after.people).toEqual([...before.people, expect.objectContaining({ email: "after@x" })]);
    await reopened.close();
  });

  it("writes made while compacting are neither lost nor replayed twice", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    await driver.createIndexes(people, [{ keys: [["n", 1]], unique: true }]);
    const early = Array.from({ length: 10 }, (_, n) => driver.insertMany(people, [{ n }]));
    const compaction = driver.compact();
    const late = Array.from({ length: 10 }, (_, n) => driver.insertMany(people, [{ n: n + 10 }]));
    await Promise.all([...early, compaction, ...late]);
    await driver.close();
    const reopened = await journalAt(path);
    expect(await reopened.count(people, {})).toBe(20);
    await reopened.close();
  });

  it("a write resolves only once its line is appended, and queued lines share an append", async () => {
    const files = new HeldFiles();
    const driver = await journalAt("journal", files);
    let done = false;
    const first = driver.insertMany(people, [{ n: 1 }]).then(() => (done = true));
    await settle();
    expect(files.appends).toHaveLength(1);
    expect(done).toBe(false);
    const queued = [2, 3, 4].map((n) => driver.insertMany(people, [{ n }]));
    await settle();
    expect(files.appends).toHaveLength(1);
    files.release();
    await first;
    expect(done).toBe(true);
    await settle();
    expect(files.appends).toHaveLength(2);
    expect(files.appends[1]!.trimEnd().split("\n")).toHaveLength(3);
    files.release();
    await Promise.all(queued);
    const reopened = await journalAt("journal", files);
    expect(await reopened.count(people, {})).toBe(4);
  });

  it("after a failed append every operation is refused as unavailable", async () => {
    const files = new HeldFiles();
    files.failAppends = true;
    const driver = await journalAt("journal", files);
    const write = driver.insertMany(people, [{ n: 1 }]);
    await settle();
    files.release();
    expect(await rejection(write)).toBeInstanceOf(DatabaseUnavailableError);
    expect(await rejection(driver.find(people, { filter: {} }))).toBeInstanceOf(DatabaseUnavailableError);
    expect(await rejection(driver.insertMany(people, [{ n: 2 }]))).toBeInstanceOf(DatabaseUnavailableError);
  });

  it("a failed compaction leaves the previous journal in place", async () => {
    const files = new HeldFiles();
    const driver = await journalAt("journal", files);
    const write = driver.insertMany(people, [{ n: 1 }]);
    await settle();
    files.release();
    await write;
    const journal = files.text;
    files.failReplace = true;
    expect(await rejection(driver.compact())).toBeInstanceOf(DatabaseUnavailableError);
    expect(files.text).toBe(journal);
    expect(await rejection(driver.count(people, {}))).toBeInstanceOf(DatabaseUnavailableError);
    expect(await (await journalAt("journal", files)).count(people, {})).toBe(1);
  });

  it("a document the journal cannot encode is refused without changing the store", async () => {
    const files = new HeldFiles();
    const driver = await journalAt("journal", files);
    // BSON regular expressions have no "g" flag.
    await expect(driver.insertMany(people, [{ pattern: /x/g }])).rejects.toThrow();
    expect(await driver.count(people, {})).toBe(0);
    expect(files.appends).toHaveLength(0);
  });

  it("close waits for queued writes", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    void driver.insertMany(people, [{ n: 1 }]);
    await driver.close();
    const reopened = await journalAt(path);
    expect(await reopened.count(people, {})).toBe(1);
    await expect(driver.count(people, {})).rejects.toThrow(/closed/);
  });
});

describe("NodeFileAccess", () => {
  const files = new NodeFileAccess();

  it("reads a missing file as null and appends to create it", async () => {
    const path = join(await tempDir(), "log");
    expect(await files.readText(path)).toBeNull();
    await files.append(path, "a\n");
    await files.append(path, "b\n");
    expect(await files.readText(path)).toBe("a\nb\n");
  });

  it("replaces a file whole, leaving no temporary file behind", async () => {
    const dir = await tempDir();
    const path = join(dir, "log");
    await files.append(path, "old\n");
    await files.replaceAtomically(path, "new\n");
    expect(await files.readText(path)).toBe("new\n");
    expect(await readdir(dir)).toEqual(["log"]);
  });

  it("a replacement that cannot be written leaves nothing behind", async () => {
    const dir = await tempDir();
    await expect(files.replaceAtomically(join(dir, "missing", "log"), "x")).rejects.toThrow();
    expect(await readdir(dir)).toEqual([]);
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
    }
    expect((await readdir(dir)).sort()).toEqual(["a.jsonl", "b.jsonl"]);
  });

  it("reads the journal path from relative, absolute and URL forms of file: URIs", () => {
    expect(journalPath("file:data/db.jsonl")).toBe("data/db.jsonl");
    expect(journalPath("file:/srv/db.jsonl")).toBe("/srv/db.jsonl");
    expect(journalPath("file:///srv/my%20db.jsonl")).toBe("/srv/my db.jsonl");
    expect(journalPath("file:///C:/data/db.jsonl")).toBe("C:/data/db.jsonl");
    expect(() => journalPath("file:")).toThrow(/names no journal file/);
  });

  it("refuses a file: URI when the runtime gives no file access", async () => {
    await expect(createDriver("file:/tmp/x.jsonl", options)).rejects.toThrow(/services\.files/);
  });

  it("names the scheme and the supported ones for an unknown URI", async () => {
    await expect(createDriver("bogus://host/db", options)).rejects.toThrow(/'bogus:'.*memory:/);
    await expect(createDriver("localhost", options)).rejects.toThrow(/no scheme/);
  });
});
