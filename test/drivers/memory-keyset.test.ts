// The memory driver's keyset reads: along a sort index a page costs its own documents however
// deep it is, the index stays right through every kind of write, and where no index keeps the
// order (or a document sorts by an array) the answers are still MongoDB's order.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { NodeFileAccess } from "../../adapters/node-files.ts";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { sortFields, sortedPage } from "../../src/drivers/sort-order.ts";
import type { Doc, Filter, Sort, Target } from "../../src/drivers/types.ts";
import { random } from "./support/random-documents.ts";

const t: Target = { collection: "things" };
const BY_N: Sort = [["n", 1], ["_id", 1]];
const SIZE = 5000;

async function build(indexed: boolean): Promise<MemoryDriver> {
  const driver = await MemoryDriver.open({ databaseName: "everest" });
  if (indexed) await driver.createIndexes(t, [{ keys: BY_N, name: "by_n", orderOnly: true }, { keys: [["group", 1]] }]);
  await driver.insertMany(t, Array.from({ length: SIZE }, (_, i) => ({ _id: new ObjectId(), n: i % 1000, group: `g${i % 100}` })));
  return driver;
}

/** Documents examined by one read, and what it found. */
async function measure(driver: MemoryDriver, sort: Sort, after: Doc | null, filter: Filter = {}, skip = 0): Promise<{ examined: number; docs: Doc[] }> {
  const before = driver.stats.documentsExamined;
  const docs = await driver.find(t, { filter, sort, after, skip, limit: 25 });
  return { examined: driver.stats.documentsExamined - before, docs };
}

describe("memory driver: keyset reads along a sort index", () => {
  it("reads a deep page, forwards or backwards, without passing the documents before it", async () => {
    const driver = await build(true);
    const all = await driver.find(t, { filter: {}, sort: BY_N, after: null });
    const deep = sortFields(all[4000]!, BY_N);
    const forward = await measure(driver, BY_N, deep);
    expect(forward.docs).toEqual(all.slice(4001, 4026));
    expect(forward.examined).toBe(25);
    const backward = await measure(driver, [["n", -1], ["_id", -1]], deep);
    expect(backward.docs).toEqual(all.slice(3975, 4000).reverse());
    expect(backward.examined).toBe(25);
  });

  it("without the index, sorts what the filter selects", async () => {
    const driver = await build(false);
    const deep = sortFields((await driver.find(t, { filter: {}, sort: BY_N, after: null, skip: 4000, limit: 1 }))[0]!, BY_N);
    expect((await measure(driver, BY_N, deep)).examined).toBe(SIZE);
  });

  it("takes a narrow filter's index candidates over a long walk", async () => {
    const driver = await build(true);
    const narrow = await measure(driver, BY_N, null, { group: "g7" });
    expect(narrow.examined).toBe(SIZE / 100);
    expect(narrow.docs.map((d) => d.group)).toEqual(Array(25).fill("g7"));
    // A filter most documents pass walks the index.
    expect((await measure(driver, BY_N, null, { group: { $ne: "g7" } })).examined).toBeLessThan(30);
  });
});

describe("memory driver: a sort index through writes", () => {
  it("answers as a sort of the documents after random inserts, replaces, updates and deletes", async () => {
    const rand = random(32);
    const sorts: Sort[] = [BY_N, [["n", -1], ["_id", -1]], [["tag", 1], ["n", -1], ["_id", 1]]];
    const driver = await MemoryDriver.open({ databaseName: "everest" });
    await driver.createIndexes(t, sorts.slice(0, 1).concat(sorts.slice(2)).map((keys, i) => ({ keys, name: `o${i}`, orderOnly: true })));
    const values = [0, 1, 2, "a", "b", null, true, new Date(5), undefined, [3, "a"], []];
    const pick = () => values[Math.floor(rand() * values.length)];
    const make = (): Doc => {
      const doc: Doc = { _id: new ObjectId() };
      const n = pick();
      if (n !== undefined) doc.n = n;
      const tag = pick();
      if (tag !== undefined) doc.tag = tag;
      return doc;
    };
    for (let round = 0; round < 60; round++) {
      await driver.insertMany(t, Array.from({ length: 5 }, make));
      const [victim] = await driver.find(t, { filter: {}, skip: Math.floor(rand() * 10), limit: 1 });
      if (victim) {
        const choice = rand();
        if (choice < 0.3) await driver.deleteOne(t, { _id: victim._id });
        else if (choice < 0.6) await driver.replaceOne(t, { _id: victim._id }, { ...make(), _id: victim._id });
        else await driver.updateOne(t, { _id: victim._id }, { $set: { n: pick() ?? 9 } });
      }
      if (round === 30) await driver.deleteMany(t, {});
      const stored = await driver.find(t, { filter: {} });
      for (const sort of sorts) {
        const expected = sortedPage(stored, (doc) => doc, sort, null, 0, 0);
        expect(await driver.find(t, { filter: {}, sort, after: null })).toEqual(expected);
        const middle = expected[Math.floor(expected.length / 2)];
        if (middle) expect(await driver.find(t, { filter: {}, sort, after: sortFields(middle, sort), limit: 7 })).toEqual(sortedPage(stored, (doc) => doc, sort, middle, 0, 7));
      }
    }
  });

  it("orders a document by the least element of an array ascending and the greatest descending", async () => {
    const driver = await MemoryDriver.open({ databaseName: "everest" });
    await driver.createIndexes(t, [{ keys: BY_N, name: "by_n", orderOnly: true }]);
    await driver.insertMany(t, [
      { _id: 1, n: [5, 1] },
      { _id: 2, n: 3 },
      { _id: 3, n: [] },
      { _id: 4, n: [2, 9] },
      { _id: 5 },
    ]);
    const ids = async (sort: Sort) => (await driver.find(t, { filter: {}, sort, after: null })).map((d) => d._id);
    expect(await ids(BY_N)).toEqual([3, 5, 1, 4, 2]);
    expect(await ids([["n", -1], ["_id", -1]])).toEqual([4, 1, 2, 5, 3]);
  });
});

describe("memory driver: a sort index from the journal", () => {
  it("comes back with the order's spec after a restart, and serves deep pages again", async () => {
    const dir = await mkdtemp(join(tmpdir(), "everest-keyset-"));
    try {
      const open = () => MemoryDriver.open({ databaseName: "everest", journal: { files: new NodeFileAccess(), path: join(dir, "journal.jsonl") } });
      const first = await open();
      await first.createIndexes(t, [{ keys: BY_N, name: "by_n", orderOnly: true }]);
      await first.insertMany(t, Array.from({ length: 3000 }, (_, i) => ({ _id: new ObjectId(), n: i })));
      await first.close();
      const again = await open();
      const deep = (await again.find(t, { filter: {}, sort: BY_N, after: null, skip: 2500, limit: 1 }))[0]!;
      const page = await measure(again, BY_N, sortFields(deep, BY_N));
      expect(page.docs.map((d) => d.n)).toEqual(Array.from({ length: 25 }, (_, i) => 2501 + i));
      expect(page.examined).toBe(25);
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
