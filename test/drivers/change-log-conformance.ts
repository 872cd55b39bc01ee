// The change log as part of the Driver contract (docs/contracts.md §3): every write method
// records each document it changes, with its before and after images, in commit order; the
// positions resume, refuse what is not theirs and expire with the retention. Run by
// runDriverConformance for every driver.
import { ObjectId } from "bson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { etagStamp } from "../../src/render/etag.ts";
import { DuplicateKeyError, InvalidPositionError, UnmetRequirementError, type Change, type ChangeRecord, type Doc, type Driver, type DriverSettings, type Target } from "../../src/drivers/types.ts";

/** What a test expects of one record. */
type Expected = Pick<ChangeRecord, "op" | "before" | "after"> & { id: unknown };

interface Scenario {
  /** What the write is, where a method has more than one. */
  label?: string;
  /** Documents stored (and recorded) before the write. */
  seed: Doc[];
  write: (driver: Driver, target: Target) => Promise<unknown>;
  /** `result`: what the write returned (an atomic update's changes: their after images are what the log must hold). */
  expected: (seed: Doc[], result: unknown) => Expected[];
}

const a = () => ({ _id: new ObjectId(), name: "ada", n: 1 });
const b = () => ({ _id: new ObjectId(), name: "bob", n: 2 });
const c = () => ({ _id: new ObjectId(), name: "cy", n: 3 });

/** An atomic update's records: one update per change it returned, with that change's images. */
const updatesOf = (result: unknown): Expected[] =>
  (Array.isArray(result) ? (result as Change[]) : result ? [result as Change] : []).map(({ before, after }) => ({ op: "update", id: after._id, before, after }));

/**
 * Every method of the Driver contract, each either a write with the records it must leave or
 * "no document writes". Typed over the contract's keys: a method added to Driver without an
 * entry here does not compile, so a new write method cannot go unrecorded unnoticed.
 */
type DriverMethod = { [K in keyof Driver]-?: NonNullable<Driver[K]> extends (...args: never[]) => unknown ? K : never }[keyof Driver];

export const DRIVER_METHODS: Record<DriverMethod, Scenario | Scenario[] | "no document writes"> = {
  find: "no document writes",
  count: "no document writes",
  estimatedCount: "no document writes",
  aggregate: "no document writes",
  createIndexes: "no document writes",
  dropIndexesBut: "no document writes",
  media: "no document writes",
  close: "no document writes",
  // Rate-limit counts and readiness (docs/contracts.md §7) are not documents.
  countHit: "no document writes",
  ping: "no document writes",
  checkServed: "no document writes",
  fault: "no document writes",
  insertMany: {
    seed: [],
    write: (driver, target) => driver.insertMany(target, [{ _id: "x", v: 1 }, { _id: "y", v: 2 }]),
    expected: () => [
      { op: "insert", id: "x", before: null, after: { _id: "x", v: 1 } },
      { op: "insert", id: "y", before: null, after: { _id: "y", v: 2 } },
    ],
  },
  replaceOne: {
    seed: [a()],
    write: (driver, target) => driver.replaceOne(target, { name: "ada" }, { name: "ada", n: 10 }),
    expected: ([ada]) => [{ op: "replace", id: ada!._id, before: ada!, after: { _id: ada!._id, name: "ada", n: 10 } }],
  },
  updateOne: {
    seed: [a()],
    write: (driver, target) => driver.updateOne(target, { name: "ada" }, { $set: { n: 5 }, $unset: { name: "" } }),
    expected: ([ada]) => [{ op: "update", id: ada!._id, before: ada!, after: { _id: ada!._id, n: 5 } }],
  },
  // The atomic updates of update-operator PATCHes and writes by filter (docs/updates.md).
  findOneAndUpdate: {
    seed: [a(), b()],
    write: (driver, target) => driver.findOneAndUpdate(target, { name: "bob" }, { $inc: { n: 5 }, $push: { tags: "x" } }, { require: { n: { $lt: 10 } } }),
    expected: ([, bob], result) => {
      const after = { ...bob!, n: 7, tags: ["x"] };
      expect(result).toEqual({ before: bob, after });
      return [{ op: "update", id: bob!._id, before: bob!, after }];
    },
  },
  updateMany: [
    {
      label: "by filter",
      seed: [a(), b(), c()],
      write: (driver, target) => driver.updateMany(target, { n: { $gte: 2 } }, { $inc: { n: 10 }, $set: { seen: true } }),
      expected: ([, bob, cy], result) => {
        const expected: Expected[] = [bob!, cy!].map((doc) => ({ op: "update", id: doc._id, before: doc, after: { ...doc, n: (doc.n as number) + 10, seen: true } }));
        expect(updatesOf(result)).toEqual(expected);
        return expected;
      },
    },
    {
      label: "with a stamp, limited to ids",
      seed: [a(), b(), c()],
      write: async (driver, target) => {
        const [ada, , cy] = await driver.find(target, { filter: {}, sort: [["n", 1]] });
        return driver.updateMany(target, {}, { $set: { seen: true } }, { ids: [ada!._id, cy!._id], stamp: etagStamp("_etag", null) });
      },
      // The stamp's value is the driver's own (a random one on mongodb): the log holds what the write returned.
      expected: ([ada, , cy], result) => {
        const records = updatesOf(result);
        expect(records.map((record) => [record.id, record.before])).toEqual([[ada!._id, ada], [cy!._id, cy]]);
        for (const record of records) expect(record.after).toEqual({ ...record.before, seen: true, _etag: expect.stringMatching(/^[0-9a-f]{40}$/) });
        return records;
      },
    },
  ],
  deleteOne: {
    seed: [a(), b()],
    write: (driver, target) => driver.deleteOne(target, { name: "bob" }),
    expected: ([, bob]) => [{ op: "delete", id: bob!._id, before: bob!, after: null }],
  },
  deleteMany: [
    {
      label: "by filter",
      seed: [a(), b()],
      write: (driver, target) => driver.deleteMany(target, {}),
      expected: (seed) => seed.map((doc) => ({ op: "delete" as const, id: doc._id, before: doc, after: null })),
    },
    {
      label: "limited to ids (a delete by filter)",
      seed: [a(), b(), c()],
      write: async (driver, target) => {
        const [ada, bob] = await driver.find(target, { filter: {}, sort: [["n", 1]] });
        return driver.deleteMany(target, { n: { $lte: 3 } }, { ids: [ada!._id, bob!._id, new ObjectId()] });
      },
      expected: ([ada, bob]) => [ada!, bob!].map((doc) => ({ op: "delete" as const, id: doc._id, before: doc, after: null })),
    },
  ],
};

const shape = (record: ChangeRecord): Expected => ({ op: record.op, id: record.id, before: record.before, after: record.after });

export function runChangeLogConformance(label: string, make: (settings?: DriverSettings) => Promise<Driver>): void {
  describe(`${label} — change log`, () => {
    let driver: Driver;
    beforeAll(async () => {
      driver = await make();
    });
    afterAll(async () => {
      await driver.close();
    });

    const fresh = (): Target => ({ database: `feed_${new ObjectId().toHexString()}`, collection: "people" });
    const recorded = async (): Promise<Target> => {
      const target = fresh();
      await driver.changes!.record(target);
      return target;
    };
    const after = async (target: Target, position: string, limit = 100): Promise<ChangeRecord[]> => {
      const read = await driver.changes!.read(target.database, position, limit);
      if (read.expired) throw new Error("the position expired");
      return read.records;
    };

    it("has a change log", () => {
      expect(driver.changes).toBeDefined();
    });

    const scenarios = Object.entries(DRIVER_METHODS).flatMap(([method, entry]) => (entry === "no document writes" ? [] : (Array.isArray(entry) ? entry : [entry]).map((scenario) => [method, scenario] as const)));
    for (const [method, scenario] of scenarios) {
      it(`${method}${scenario.label ? ` ${scenario.label}` : ""} records each document it changes, with its before and after images`, async () => {
        const target = await recorded();
        const seed = scenario.seed.map((doc) => ({ ...doc }));
        if (seed.length) await driver.insertMany(target, seed.map((doc) => ({ ...doc })));
        const start = await driver.changes!.head(target.database);
        const result = await scenario.write(driver, target);
        const records = await after(target, start);
        expect(records.map(shape)).toEqual(scenario.expected(seed, result));
        for (const record of records) {
          expect(record.collection).toBe("people");
          expect(record.at).toBeInstanceOf(Date);
        }
      });
    }

    it("records nothing for a collection that is not recorded, nor for a write that changes nothing or fails", async () => {
      const target = await recorded();
      const other = { ...target, collection: "others" };
      await driver.insertMany(target, [{ _id: 1, n: 1 }]);
      const start = await driver.changes!.head(target.database);
      await driver.insertMany(other, [{ _id: 1 }]);
      await driver.updateOne(target, { _id: 1 }, { $set: { n: 1 } });
      await driver.updateOne(target, { _id: 2 }, { $set: { n: 1 } });
      await driver.deleteOne(target, { _id: 2 });
      await expect(driver.insertMany(target, [{ _id: 3 }, { _id: 1 }])).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await driver.findOneAndUpdate(target, { _id: 2 }, { $inc: { n: 1 } })).toBeNull();
      expect(await driver.updateMany(target, { n: 2 }, { $inc: { n: 1 } })).toEqual([]);
      expect(await driver.updateMany(target, {}, { $inc: { n: 1 } }, { ids: [2] })).toEqual([]);
      await expect(driver.findOneAndUpdate(target, { _id: 1 }, { $inc: { n: 1 } }, { require: { n: { $gt: 5 } } })).rejects.toBeInstanceOf(UnmetRequirementError);
      await expect(driver.updateMany(target, {}, { $inc: { n: 1 } }, { require: { n: { $gt: 5 } } })).rejects.toBeInstanceOf(UnmetRequirementError);
      expect(await driver.deleteMany(target, { _id: 2 })).toBe(0);
      expect(await driver.deleteMany(target, {}, { ids: [2] })).toBe(0);
      expect(await after(target, start)).toEqual([]);
      expect(await driver.changes!.head(target.database)).toBe(start);
    });

    it("reads in commit order from any position, a page at a time, none twice", async () => {
      const target = await recorded();
      const start = await driver.changes!.head(target.database);
      for (let i = 0; i < 5; i++) await driver.insertMany(target, [{ _id: i }]);
      await driver.updateOne(target, { _id: 0 }, { $set: { v: 1 } });
      const all = await after(target, start);
      expect(all.map((r) => [r.op, r.id])).toEqual([["insert", 0], ["insert", 1], ["insert", 2], ["insert", 3], ["insert", 4], ["update", 0]]);
      expect(new Set(all.map((r) => r.position)).size).toBe(6);
      expect((await after(target, all[2]!.position)).map((r) => r.id)).toEqual([3, 4, 0]);
      expect((await after(target, start, 2)).map((r) => r.id)).toEqual([0, 1]);
      expect(await after(target, all[5]!.position)).toEqual([]);
      expect(await driver.changes!.head(target.database)).toBe(all[5]!.position);
    });

    it("refuses a position that is malformed or not its own", async () => {
      const target = await recorded();
      await driver.insertMany(target, [{ _id: 1 }]);
      const head = await driver.changes!.head(target.database);
      const other = await recorded();
      await driver.insertMany(other, [{ _id: 1 }, { _id: 2 }]);
      const otherHead = await driver.changes!.head(other.database);
      for (const bad of ["", "nonsense", "1", `${head}x`, otherHead]) {
        await expect(driver.changes!.read(target.database, bad, 10), bad).rejects.toBeInstanceOf(InvalidPositionError);
      }
    });

    it("wakes a watcher when it records a write", async () => {
      const target = await recorded();
      let woken = 0;
      const stop = driver.changes!.watch(target.database, () => woken++);
      await driver.insertMany(target, [{ _id: 1 }]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(woken).toBeGreaterThan(0);
      stop();
      const before = woken;
      await driver.insertMany(target, [{ _id: 2 }]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(woken).toBe(before);
    });

    it("keeps only what the retention allows, and says so of a position older than that", async () => {
      const small = await make({ CHANGE_FEED_RETENTION_COUNT: 3 });
      try {
        const target = fresh();
        await small.changes!.record(target);
        const start = await small.changes!.head(target.database);
        for (let i = 0; i < 6; i++) await small.insertMany(target, [{ _id: i }]);
        const old = await small.changes!.read(target.database, start, 10);
        expect(old.expired).toBe(true);
        if (old.expired) expect(old.head).toBe(await small.changes!.head(target.database));
        const kept = await small.changes!.read(target.database, "", 10).catch((error: unknown) => error);
        expect(kept).toBeInstanceOf(InvalidPositionError);
      } finally {
        await small.close();
      }
    });
  });
}
