// The Driver contract's atomic updates (findOneAndUpdate, updateMany) as tests, run by
// runDriverConformance on every driver: the update operators an operator PATCH sends, the
// write's requirement and stamp, ids, concurrency, and all-or-nothing where promised.
import { ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { DuplicateKeyError, UnmetRequirementError, type Doc, type Driver, type Stamp, type Target } from "../../src/drivers/types.ts";
import { etagStamp } from "../../src/render/etag.ts";

export interface ModifyContractOptions {
  /**
   * The driver sets a stamp to a fresh random value rather than its hash (mongodb, and the
   * gateway over it): it runs no code in the atomic step.
   */
  randomStamps?: boolean;
  /** updateMany is all-or-nothing (every driver but mongodb without transactions). */
  allOrNothing?: boolean;
  /** The driver is reached over the network (data-api): the stamp's code stays here, the gateway makes its own. */
  remote?: boolean;
}

/** A rejection's error (the test fails if the promise resolves). */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the promise to reject");
    },
    (error: unknown) => error,
  );
}

const stamp = etagStamp("_etag", null);

export function modifyContract(driver: () => Driver, target: () => Target, options: ModifyContractOptions): void {
  const allOrNothing = options.allOrNothing ?? true;
  const seeded = async (docs: Doc[]): Promise<Target> => {
    const t = target();
    await driver().insertMany(t, docs);
    return t;
  };
  const stored = async (t: Target, _id: unknown): Promise<Doc | undefined> => (await driver().find(t, { filter: { _id } }))[0];

  describe("findOneAndUpdate", () => {
    const id = new ObjectId();
    const start = (): Doc => ({ _id: id, n: 10, x: 2.5, name: "b", tags: ["a", "b"], scores: [5, 1], sub: { count: 1 }, when: new Date("2020-01-01T00:00:00Z") });

    it.each([
      ["$set with dotted paths", { $set: { name: "c", "sub.count": 7, "sub.new": true } }, { name: "c", sub: { count: 7, new: true } }],
      ["$unset", { $unset: { name: "", "sub.count": "" } }, { sub: {} }],
      ["$inc", { $inc: { n: 5, "sub.count": -1, fresh: 3 } }, { n: 15, sub: { count: 0 }, fresh: 3 }],
      ["$mul", { $mul: { n: 3, x: 2 } }, { n: 30, x: 5 }],
      ["$inc and $mul of missing fields, beside $set", { $inc: { a: 2 }, $mul: { b: 5 }, $set: { name: "c" } }, { a: 2, b: 0, name: "c" }],
      ["$min", { $min: { n: 4, when: new Date("2019-01-01T00:00:00Z") } }, { n: 4, when: new Date("2019-01-01T00:00:00Z") }],
      ["$min keeping a lower value", { $min: { n: 40 } }, { n: 10 }],
      ["$max", { $max: { n: 40, name: "z" } }, { n: 40, name: "z" }],
      ["$push", { $push: { tags: "c" } }, { tags: ["a", "b", "c"] }],
      ["$push with $each, $position and $slice", { $push: { tags: { $each: ["x", "y"], $position: 0, $slice: 3 } } }, { tags: ["x", "y", "a"] }],
      ["$addToSet", { $addToSet: { tags: { $each: ["b", "d"] } } }, { tags: ["a", "b", "d"] }],
      ["$pull of a value", { $pull: { tags: "a" } }, { tags: ["b"] }],
      ["$pull by a condition", { $pull: { scores: { $gte: 3 } } }, { scores: [1] }],
    ])("applies %s atomically and returns the document before and after", async (_label, update, changed) => {
      const t = await seeded([start()]);
      const change = await driver().findOneAndUpdate(t, { _id: id }, update as Doc);
      expect(change!.before).toEqual(start());
      expect(change!.after).toEqual({ ...start(), ...(changed as Doc), ...("$unset" in update ? { name: undefined } : {}) });
      expect(await stored(t, id)).toEqual(change!.after);
    });

    it("answers null and writes nothing when no document matches", async () => {
      const t = await seeded([start()]);
      expect(await driver().findOneAndUpdate(t, { _id: id, n: 11 }, { $inc: { n: 1 } })).toBeNull();
      expect(await driver().findOneAndUpdate({ ...t, collection: "none" }, { _id: id }, { $inc: { n: 1 } })).toBeNull();
      expect((await stored(t, id))!.n).toBe(10);
    });

    it("refuses a document that does not meet the requirement, leaving it as it was", async () => {
      const t = await seeded([start()]);
      const error = await failure(driver().findOneAndUpdate(t, { _id: id }, { $inc: { n: -11 } }, { require: { n: { $gte: 11 } } }));
      expect(error).toBeInstanceOf(UnmetRequirementError);
      expect((error as UnmetRequirementError).documents).toEqual([start()]);
      expect(await stored(t, id)).toEqual(start());
      const change = await driver().findOneAndUpdate(t, { _id: id }, { $inc: { n: -10 } }, { require: { n: { $gte: 10 } } });
      expect(change!.after.n).toBe(0);
    });

    it("sets the stamp from the document it leaves (or, where the store cannot, to a fresh value)", async () => {
      const t = await seeded([{ ...start(), _etag: "old" }]);
      const change = await driver().findOneAndUpdate(t, { _id: id }, { $inc: { n: 1 } }, { stamp });
      const etag = change!.after._etag as string;
      expect(etag).toMatch(/^[0-9a-f]{40}$/);
      // The hash of the document left, with the ETag it had before (a plain PATCH's recipe).
      if (!options.randomStamps) expect(etag).toBe(stamp.value({ ...change!.after, _etag: "old" }));
      expect(await stored(t, id)).toEqual(change!.after);
      const again = await driver().findOneAndUpdate(t, { _id: id }, { $inc: { n: -1 } }, { stamp });
      expect(again!.after._etag).not.toBe(etag);
    });

    it("keeps count under concurrent increments: 20 clients × 50 $inc leave exactly +1000", async () => {
      const t = await seeded([start()]);
      const client = async () => {
        for (let i = 0; i < 50; i++) await driver().findOneAndUpdate(t, { _id: id }, { $inc: { n: 1 } }, { stamp });
      };
      await Promise.all(Array.from({ length: 20 }, client));
      expect((await stored(t, id))!.n).toBe(1010);
    }, 60_000);

    it("never crosses a requirement under concurrent decrements: 50 × $inc -1 on 10 with n ≥ 1 required", async () => {
      const t = await seeded([start()]);
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => driver().findOneAndUpdate(t, { _id: id }, { $inc: { n: -1 } }, { require: { n: { $gte: 1 } } })));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(10);
      expect(results.filter((r) => r.status === "rejected" && r.reason instanceof UnmetRequirementError)).toHaveLength(40);
      expect((await stored(t, id))!.n).toBe(0);
    }, 60_000);
  });

  describe("updateMany", () => {
    const ids = Array.from({ length: 5 }, () => new ObjectId());
    const docs = (): Doc[] => ids.map((_id, i) => ({ _id, i, group: i < 3 ? "a" : "b", n: i, code: `c${i}` }));

    it("changes every matching document and returns each before and after, in natural order", async () => {
      const t = await seeded(docs());
      const changes = await driver().updateMany(t, { group: "a" }, { $inc: { n: 10 }, $set: { seen: true } }, { stamp });
      expect(changes.map((c) => c.before)).toEqual(docs().slice(0, 3));
      expect(changes.map((c) => c.after.n)).toEqual([10, 11, 12]);
      for (const change of changes) {
        expect(change.after.seen).toBe(true);
        expect(await stored(t, change.after._id)).toEqual(change.after);
        if (!options.randomStamps) {
          const { _etag: _made, ...left } = change.after;
          expect(change.after._etag).toBe(stamp.value(left));
        }
      }
      expect((await stored(t, ids[3]))!.n).toBe(3);
      expect(await driver().updateMany(t, { group: "none" }, { $inc: { n: 1 } })).toEqual([]);
    });

    it("changes only the documents named by ids that still match the filter", async () => {
      const t = await seeded(docs());
      const changes = await driver().updateMany(t, { group: "a" }, { $set: { picked: 1 } }, { ids: [ids[0], ids[2], ids[4], new ObjectId()] });
      expect(changes.map((c) => c.after.i)).toEqual([0, 2]);
      expect((await stored(t, ids[1]))!.picked).toBeUndefined();
      expect((await stored(t, ids[4]))!.picked).toBeUndefined();
    });

    it("deleteMany with ids deletes only those that also match the filter", async () => {
      const t = await seeded(docs());
      expect(await driver().deleteMany(t, { group: "a" }, { ids: [ids[0], ids[2], ids[4], new ObjectId()] })).toBe(2);
      expect((await driver().find(t, { filter: {}, sort: [["i", 1]] })).map((d) => d.i)).toEqual([1, 3, 4]);
      expect(await driver().deleteMany(t, {}, { ids: [ids[1]] })).toBe(1);
      expect(await driver().count(t, {})).toBe(2);
    });

    it("writes nothing when a matching document does not meet the requirement, and names it", async () => {
      const t = await seeded(docs());
      const error = await failure(driver().updateMany(t, {}, { $inc: { n: -2 } }, { require: { n: { $gte: 2 } } }));
      expect(error).toBeInstanceOf(UnmetRequirementError);
      expect((error as UnmetRequirementError).documents.map((d) => d.i)).toEqual([0, 1]);
      expect(await driver().find(t, { filter: {}, sort: [["i", 1]] })).toEqual(docs());
    });

    it(`${allOrNothing ? "leaves every document as it was" : "reports the duplicate"} when a unique index refuses a document half way`, async () => {
      const t = target();
      await driver().createIndexes(t, [{ keys: [["code", 1]], unique: true, name: "code_unique" }]);
      await driver().insertMany(t, docs());
      // The third document's new code is the fourth's: refused after two were changed.
      const error = await failure(driver().updateMany(t, { group: "a" }, { $set: { code: "c3" } }));
      expect(error).toBeInstanceOf(DuplicateKeyError);
      if (allOrNothing) expect(await driver().find(t, { filter: {}, sort: [["i", 1]] })).toEqual(docs());
    });

    if (!options.randomStamps && !options.remote) {
      it("leaves every document as it was when working out one of them fails half way", async () => {
        const t = await seeded(docs());
        let made = 0;
        const failing: Stamp = {
          ...stamp,
          value: (document) => {
            if (++made === 3) throw new Error("injected failure");
            return stamp.value(document);
          },
        };
        await expect(driver().updateMany(t, {}, { $inc: { n: 100 } }, { stamp: failing })).rejects.toThrow();
        expect(await driver().find(t, { filter: {}, sort: [["i", 1]] })).toEqual(docs());
      });
    }
  });
}
