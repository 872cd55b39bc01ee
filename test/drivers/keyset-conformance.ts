// Keyset reads (FindQuery.after) and estimated counts as part of the Driver contract: every
// driver pages in MongoDB's sort order — missing and null together first, then numbers,
// strings (by code point), ObjectIds, booleans, dates, `_id` breaking ties — so a walk from
// position to position gives the one sorted read, with or without the index that keeps the
// order. The expected orders are written out by hand from MongoDB's rules.
import { Decimal128, ObjectId } from "bson";
import { beforeAll, describe, expect, it } from "vitest";
import type { Doc, Driver, Filter, Sort, Target } from "../../src/drivers/types.ts";
import { sortFields } from "../../src/drivers/sort-order.ts";

const oid = (n: number) => new ObjectId(n.toString(16).padStart(24, "0"));
const number = (doc: Doc) => parseInt((doc._id as ObjectId).toHexString(), 16);

/** One document per kind of value MongoDB orders, ties included. */
function population(): Doc[] {
  const rows: Array<[number, unknown, string | undefined, string]> = [
    [1, 3, "b", "x"],
    [2, "apple", "a", "y"],
    [3, null, "c", "x"],
    [4, undefined, "a", "x"],
    [5, new Date("2020-01-01T00:00:00Z"), "b", "y"],
    [6, true, "a", "x"],
    [7, false, undefined, "x"],
    [8, new ObjectId("aaaaaaaaaaaaaaaaaaaaaaaa"), "c", "y"],
    [9, 3, "a", "x"],
    [10, -1.5, "b", "y"],
    [11, Decimal128.fromString("2.5"), "a", "x"],
    [12, "Banana", "c", "x"],
    [13, 3, "c", "y"],
    [14, new Date("1999-12-31T00:00:00Z"), "a", "x"],
    [15, "é", "b", "x"],
    [16, 1000, "d", "y"],
    [17, "😀", "d", "x"],
    [18, "\uffff", "b", "x"],
  ];
  return rows.map(([n, v, w, g]) => {
    const doc: Doc = { _id: oid(n) };
    if (v !== undefined) doc.v = v;
    if (w !== undefined) doc.w = w;
    doc.g = g;
    return doc;
  });
}

const BY_V: Sort = [["v", 1], ["_id", 1]];
const BY_V_ORDER = [3, 4, 10, 11, 1, 9, 13, 16, 12, 2, 15, 18, 17, 8, 7, 6, 14, 5];
const BY_V_DESC: Sort = [["v", -1], ["_id", -1]];
const MIXED: Sort = [["w", 1], ["v", -1], ["_id", 1]];
const MIXED_ORDER = [7, 14, 6, 2, 9, 11, 4, 5, 18, 15, 1, 10, 8, 12, 13, 3, 17, 16];
const BY_ID_DESC: Sort = [["_id", -1]];
const IN_X = BY_V_ORDER.filter((n) => population()[n - 1]!.g === "x");

const reverse = (sort: Sort): Sort => sort.map(([path, direction]) => [path, direction === 1 ? -1 : 1]);

export function runKeysetConformance(driver: () => Driver, target: () => Target): void {
  describe("keyset reads and estimated counts", () => {
    const seeded = async (): Promise<Target> => {
      const t = target();
      await driver().insertMany(t, population());
      return t;
    };

    /** Every page of a walk by position, `size` documents at a time. */
    const walk = async (t: Target, sort: Sort, filter: Filter = {}, size = 4): Promise<number[]> => {
      const seen: number[] = [];
      let after: Doc | null = null;
      for (let pages = 0; pages < 50; pages++) {
        const page = await driver().find(t, { filter, sort, after, limit: size });
        seen.push(...page.map(number));
        if (page.length < size) return seen;
        after = sortFields(page[page.length - 1]!, sort);
      }
      throw new Error("the walk did not end");
    };

    const orders: Array<[string, Sort, number[]]> = [
      ["one key ascending, mixed types, ties and missing values", BY_V, BY_V_ORDER],
      ["one key descending", BY_V_DESC, [...BY_V_ORDER].reverse()],
      ["mixed directions over several keys", MIXED, MIXED_ORDER],
      ["_id alone", BY_ID_DESC, Array.from({ length: 18 }, (_, i) => 18 - i)],
    ];

    for (const indexed of [false, true]) {
      describe(indexed ? "with the order's index" : "without an index", () => {
        let t: Target;
        beforeAll(async () => {
          t = await seeded();
          if (indexed) await driver().createIndexes(t, [BY_V, MIXED, BY_ID_DESC].map((keys, i) => ({ keys, name: `order_${i}`, orderOnly: true })));
        });

        for (const [label, sort, expected] of orders) {
          it(`${label}: one read, and a walk by position, give MongoDB's order`, async () => {
            expect((await driver().find(t, { filter: {}, sort, after: null })).map(number)).toEqual(expected);
            expect(await walk(t, sort)).toEqual(expected);
            expect(await walk(t, sort, {}, 1)).toEqual(expected);
          });
        }

        it("walks backwards: the reverse order from a position", async () => {
          const position = sortFields(population()[12]!, BY_V);
          const before = await driver().find(t, { filter: {}, sort: reverse(BY_V), after: position, limit: 3 });
          expect(before.map(number)).toEqual([9, 1, 11]);
        });

        it("a filter holds on every page", async () => {
          expect(await walk(t, BY_V, { g: "x" }, 3)).toEqual(IN_X);
        });

        it("skips and limits from the start or from a position", async () => {
          expect((await driver().find(t, { filter: {}, sort: BY_V, after: null, skip: 4, limit: 3 })).map(number)).toEqual(BY_V_ORDER.slice(4, 7));
          const position = sortFields(population()[0]!, BY_V);
          expect((await driver().find(t, { filter: {}, sort: BY_V, after: position, skip: 2, limit: 2 })).map(number)).toEqual([16, 12]);
        });

        it("projects the page without losing its place", async () => {
          const page = await driver().find(t, { filter: { g: "y" }, sort: BY_V, after: null, limit: 2, projection: { w: 1 } });
          expect(page).toEqual([{ _id: oid(10), w: "b" }, { _id: oid(13), w: "c" }]);
        });
      });
    }

    it("a document present throughout is seen once, whatever is inserted and deleted during the walk", async () => {
      const t = await seeded();
      const seen: number[] = [];
      let after: Doc | null = null;
      for (let page = 0; page < 20; page++) {
        const docs = await driver().find(t, { filter: {}, sort: BY_V, after, limit: 3 });
        seen.push(...docs.map(number));
        if (docs.length < 3) break;
        after = sortFields(docs[docs.length - 1]!, BY_V);
        // Before the position, at it and after it: new documents, and some of the old ones gone.
        await driver().insertMany(t, [{ _id: oid(100 + page), v: 3 }, { _id: oid(200 + page), v: "apple" }, { _id: oid(300 + page), v: null }]);
        if (page === 1) await driver().deleteMany(t, { _id: { $in: [oid(16), oid(3)] } });
      }
      const throughout = BY_V_ORDER.filter((n) => n !== 16 && n !== 3);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.filter((n) => throughout.includes(n))).toEqual(throughout);
    });

    it("estimates the size of a collection from the store's statistics", async () => {
      const t = await seeded();
      expect(await driver().estimatedCount(t)).toBe(18);
      expect(await driver().estimatedCount(target())).toBe(0);
    });
  });
}
