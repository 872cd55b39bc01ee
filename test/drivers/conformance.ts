// The Driver contract as tests. Every driver runs this same suite (the memory driver here; the
// mongodb driver against a MongoDB emulator and the data-api driver through its gateway
// elsewhere), so behaviour the core relies on cannot drift between backends. Each test works
// in a database of its own, so a persistent backend cannot leak state from one to the next.
import { Decimal128, ObjectId } from "bson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DuplicateKeyError, InvalidQueryError, type Doc, type Driver, type DriverSettings, type MediaFile, type Projection, type Target } from "../../src/drivers/types.ts";
import { runChangeLogConformance } from "./change-log-conformance.ts";
import { modifyContract, type ModifyContractOptions } from "./conformance-modify.ts";
import { runKeysetConformance } from "./keyset-conformance.ts";

async function readAll(file: MediaFile, range?: { start: number; end: number }): Promise<Uint8Array> {
  const result = file.read(range);
  if (!(result instanceof ReadableStream)) return result;
  return new Uint8Array(await new Response(result).arrayBuffer());
}

/** The error a promise rejects with (the test fails if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

function freshDatabase(): string {
  return `conf_${new ObjectId().toHexString()}`;
}

const ids = Array.from({ length: 6 }, () => new ObjectId());
const owner = new ObjectId();

/** A small population covering the value types the core stores. */
function people(): Doc[] {
  return [
    { _id: ids[0], name: "ada", age: 36, born: new Date("1815-12-10T00:00:00Z"), address: { city: "london", zip: "N1" }, tags: ["math", "poetry"], owner },
    { _id: ids[1], name: "alan", age: 41, born: new Date("1912-06-23T00:00:00Z"), address: { city: "london", zip: "W2" }, tags: ["math"], owner },
    { _id: ids[2], name: "grace", age: 85, born: new Date("1906-12-09T00:00:00Z"), address: { city: "new york", zip: "10001" }, tags: ["navy", "cobol"] },
    { _id: ids[3], name: "edsger", age: 72, born: new Date("1930-05-11T00:00:00Z"), address: { city: "austin", zip: "78701" }, tags: [], nickname: null },
    { _id: ids[4], name: "barbara", age: 51, born: new Date("1939-11-07T00:00:00Z"), address: { city: "boston", zip: "02101" }, tags: ["clu"], balance: Decimal128.fromString("10.50") },
    { _id: ids[5], name: "donald", age: 87, born: new Date("1938-01-10T00:00:00Z"), address: { city: "stanford", zip: "94305" }, tags: ["tex", "math"] },
  ];
}

/** Set by .ci/run when MONGODB_URI points at ../shared/mongo-emulator rather than a mongod. */
export const MONGODB_EMULATED = process.env.MONGODB_EMULATOR === "1";

export interface ConformanceOptions extends ModifyContractOptions {
  /**
   * The backend is ../shared/mongo-emulator (mongomock), which answers `$count` over no
   * documents with `{count: 0}` where MongoDB answers nothing; that one check is skipped.
   */
  emulated?: boolean;
}

/** `make` builds a driver with these settings (the change log's retention) or the defaults. */
export function runDriverConformance(label: string, make: (settings?: DriverSettings) => Promise<Driver>, options: ConformanceOptions = {}): void {
  runChangeLogConformance(label, make);
  describe(`${label} — Driver contract`, () => {
    let driver: Driver;
    beforeAll(async () => {
      driver = await make();
    });
    afterAll(async () => {
      await driver.close();
    });

    const target = (collection = "people"): Target => ({ database: freshDatabase(), collection });
    const seeded = async (): Promise<Target> => {
      const t = target();
      await driver.insertMany(t, people());
      return t;
    };
    const names = (docs: Doc[]): unknown[] => docs.map((d) => d.name);
    const find = async (t: Target, filter: Doc): Promise<unknown[]> =>
      names(await driver.find(t, { filter, sort: [["name", 1]] }));

    describe("create, read, replace, update, delete", () => {
      it("stores documents and reads them back with their types and _id first", async () => {
        const t = await seeded();
        const [ada] = await driver.find(t, { filter: { _id: ids[0] } });
        expect(Object.keys(ada!)[0]).toBe("_id");
        expect(ada).toEqual(people()[0]);
        expect(ada!._id).toBeInstanceOf(ObjectId);
        expect(ada!.born).toBeInstanceOf(Date);
        const [barbara] = await driver.find(t, { filter: { name: "barbara" } });
        expect(barbara!.balance).toBeInstanceOf(Decimal128);
        expect(String(barbara!.balance)).toBe("10.50");
      });

      it("gives a document without _id an ObjectId and sets it on the caller's document", async () => {
        const t = target();
        const doc: Doc = { name: "new" };
        await driver.insertMany(t, [doc]);
        expect(doc._id).toBeInstanceOf(ObjectId);
        const stored = await driver.find(t, { filter: { _id: doc._id } });
        expect(stored).toEqual([{ _id: doc._id, name: "new" }]);
      });

      it("inserting nothing is a no-op", async () => {
        const t = target();
        await driver.insertMany(t, []);
        expect(await driver.count(t, {})).toBe(0);
      });

      it("replaceOne swaps the whole document and keeps its _id", async () => {
        const t = await seeded();
        expect(await driver.replaceOne(t, { _id: ids[1] }, { name: "turing" })).toBe(true);
        expect(await driver.find(t, { filter: { _id: ids[1] } })).toEqual([{ _id: ids[1], name: "turing" }]);
        expect(await driver.replaceOne(t, { _id: new ObjectId() }, { name: "nobody" })).toBe(false);
        expect(await driver.count(t, {})).toBe(6);
      });

      it("replaceOne refuses to change the _id", async () => {
        const t = await seeded();
        await expect(driver.replaceOne(t, { _id: ids[1] }, { _id: new ObjectId(), name: "x" })).rejects.toThrow();
        expect(await find(t, { _id: ids[1] })).toEqual(["alan"]);
      });

      it("updateOne sets dotted paths and unsets fields, leaving the rest alone", async () => {
        const t = await seeded();
        const ok = await driver.updateOne(t, { _id: ids[0] }, { $set: { "address.city": "paris", "meta.visits": 3, age: 37 }, $unset: { tags: "" } });
        expect(ok).toBe(true);
        const [ada] = await driver.find(t, { filter: { _id: ids[0] } });
        expect(ada).toEqual({
          _id: ids[0],
          name: "ada",
          age: 37,
          born: people()[0]!.born,
          address: { city: "paris", zip: "N1" },
          owner,
          meta: { visits: 3 },
        });
        expect(await driver.updateOne(t, { _id: new ObjectId() }, { $set: { age: 1 } })).toBe(false);
      });

      it("deleteOne removes one document and reports whether it did", async () => {
        const t = await seeded();
        expect(await driver.deleteOne(t, { _id: ids[2] })).toBe(true);
        expect(await driver.deleteOne(t, { _id: ids[2] })).toBe(false);
        expect(await driver.count(t, {})).toBe(5);
        expect(await driver.deleteOne(t, { "address.city": "london" })).toBe(true);
        expect(await driver.count(t, { "address.city": "london" })).toBe(1);
      });

      it("deleteMany counts what it removed; an empty filter removes everything", async () => {
        const t = await seeded();
        expect(await driver.deleteMany(t, { tags: "math" })).toBe(3);
        expect(await driver.deleteMany(t, { tags: "math" })).toBe(0);
        expect(await driver.deleteMany(t, {})).toBe(3);
        expect(await driver.find(t, { filter: {} })).toEqual([]);
        await driver.insertMany(t, [{ _id: ids[0], name: "again" }]);
        expect(await find(t, {})).toEqual(["again"]);
      });
    });

    describe("filters", () => {
      it("equality on strings, numbers, ObjectIds and dotted paths", async () => {
        const t = await seeded();
        expect(await find(t, { name: "grace" })).toEqual(["grace"]);
        expect(await find(t, { age: 72 })).toEqual(["edsger"]);
        expect(await find(t, { owner })).toEqual(["ada", "alan"]);
        expect(await find(t, { _id: ids[4] })).toEqual(["barbara"]);
        expect(await find(t, { "address.city": "london" })).toEqual(["ada", "alan"]);
        expect(await find(t, { address: { city: "austin", zip: "78701" } })).toEqual(["edsger"]);
      });

      it("an _id beside other equalities matches only where every one holds", async () => {
        const t = await seeded();
        expect(await find(t, { _id: ids[4], name: "barbara", age: 51 })).toEqual(["barbara"]);
        expect(await find(t, { _id: ids[4], name: "grace" })).toEqual([]);
        expect(await find(t, { _id: ids[0], tags: "poetry" })).toEqual(["ada"]);
        expect(await find(t, { _id: ids[0], tags: "navy" })).toEqual([]);
        expect(await find(t, { _id: ids[3], missing: "x" })).toEqual([]);
        expect(await find(t, { _id: ids[0], owner })).toEqual(["ada"]);
        expect(await find(t, { _id: new ObjectId(), name: "ada" })).toEqual([]);
        expect(names(await driver.find(t, { filter: { _id: ids[2] } }))).toEqual(["grace"]);
        expect(await driver.find(t, { filter: { _id: ids[2] }, skip: 1 })).toEqual([]);
        expect(await driver.find(t, { filter: { _id: ids[2] }, projection: { age: 1 } })).toEqual([{ _id: ids[2], age: 85 }]);
        expect(await driver.count(t, { _id: ids[4], name: "barbara" })).toBe(1);
        expect(await driver.count(t, { _id: ids[4], name: "ada" })).toBe(0);
        expect(await driver.updateOne(t, { _id: ids[1], name: "ada" }, { $set: { age: 1 } })).toBe(false);
        expect(await driver.deleteOne(t, { _id: ids[1], age: 41 })).toBe(true);
        expect(await driver.deleteMany(t, { _id: ids[1] })).toBe(0);
      });

      it("array fields match on any element", async () => {
        const t = await seeded();
        expect(await find(t, { tags: "math" })).toEqual(["ada", "alan", "donald"]);
        expect(await find(t, { tags: { $in: ["cobol", "clu"] } })).toEqual(["barbara", "grace"]);
        expect(await find(t, { tags: { $size: 0 } })).toEqual(["edsger"]);
      });

      it("$in over values and ObjectIds", async () => {
        const t = await seeded();
        expect(await find(t, { age: { $in: [36, 85, 1000] } })).toEqual(["ada", "grace"]);
        expect(await find(t, { _id: { $in: [ids[3], ids[5], new ObjectId()] } })).toEqual(["donald", "edsger"]);
        expect(await find(t, { name: { $in: [] } })).toEqual([]);
        expect(await find(t, { name: { $nin: ["ada", "alan", "grace"] } })).toEqual(["barbara", "donald", "edsger"]);
      });

      it("ranges on numbers, strings and dates", async () => {
        const t = await seeded();
        expect(await find(t, { age: { $gt: 72 } })).toEqual(["donald", "grace"]);
        expect(await find(t, { age: { $gte: 72 } })).toEqual(["donald", "edsger", "grace"]);
        expect(await find(t, { age: { $gte: 41, $lt: 72 } })).toEqual(["alan", "barbara"]);
        expect(await find(t, { age: { $lte: 36 } })).toEqual(["ada"]);
        expect(await find(t, { name: { $gte: "b", $lt: "e" } })).toEqual(["barbara", "donald"]);
        expect(await find(t, { born: { $gte: new Date("1930-01-01T00:00:00Z") } })).toEqual(["barbara", "donald", "edsger"]);
        expect(await find(t, { born: { $lt: new Date("1900-01-01T00:00:00Z") } })).toEqual(["ada"]);
        // A range only matches values of its own type.
        expect(await find(t, { name: { $gt: 5 } })).toEqual([]);
      });

      it("$or, $and, $ne, $exists and null", async () => {
        const t = await seeded();
        expect(await find(t, { $or: [{ name: "ada" }, { age: { $gt: 86 } }] })).toEqual(["ada", "donald"]);
        expect(await find(t, { $and: [{ "address.city": "london" }, { age: { $gt: 40 } }] })).toEqual(["alan"]);
        expect(await find(t, { $and: [{ tags: "math" }, { $or: [{ age: 36 }, { age: 87 }] }] })).toEqual(["ada", "donald"]);
        expect(await find(t, { "address.city": { $ne: "london" } })).toEqual(["barbara", "donald", "edsger", "grace"]);
        expect(await find(t, { balance: { $exists: true } })).toEqual(["barbara"]);
        // null matches both an explicit null and a missing field.
        expect(await find(t, { nickname: null })).toEqual(["ada", "alan", "barbara", "donald", "edsger", "grace"]);
        expect(await find(t, { nickname: { $exists: true } })).toEqual(["edsger"]);
      });

      it("an unknown operator is refused as an invalid query", async () => {
        const t = await seeded();
        expect(await rejection(driver.find(t, { filter: { age: { $bogus: 1 } } }))).toBeInstanceOf(InvalidQueryError);
      });
    });

    describe("sort, skip, limit, projection, count", () => {
      it("sorts ascending, descending and on several keys", async () => {
        const t = await seeded();
        expect(names(await driver.find(t, { filter: {}, sort: [["age", 1]] }))).toEqual(["ada", "alan", "barbara", "edsger", "grace", "donald"]);
        expect(names(await driver.find(t, { filter: {}, sort: [["age", -1]] }))).toEqual(["donald", "grace", "edsger", "barbara", "alan", "ada"]);
        expect(names(await driver.find(t, { filter: {}, sort: [["address.city", 1], ["age", -1]] }))).toEqual(["edsger", "barbara", "alan", "ada", "grace", "donald"]);
        expect(names(await driver.find(t, { filter: {}, sort: [["born", -1]] }))[0]).toBe("barbara");
      });

      it("pages with skip and limit after sorting", async () => {
        const t = await seeded();
        const page = (skip: number, limit: number) => driver.find(t, { filter: {}, sort: [["name", 1]], skip, limit });
        expect(names(await page(0, 2))).toEqual(["ada", "alan"]);
        expect(names(await page(2, 2))).toEqual(["barbara", "donald"]);
        expect(names(await page(4, 2))).toEqual(["edsger", "grace"]);
        expect(await page(6, 2)).toEqual([]);
        expect(names(await driver.find(t, { filter: { tags: "math" }, sort: [["age", -1]], limit: 1 }))).toEqual(["donald"]);
      });

      it("skip and limit without a sort return distinct documents", async () => {
        const t = await seeded();
        const first = await driver.find(t, { filter: {}, limit: 3 });
        const rest = await driver.find(t, { filter: {}, skip: 3 });
        expect(first).toHaveLength(3);
        expect(rest).toHaveLength(3);
        expect(new Set([...names(first), ...names(rest)]).size).toBe(6);
      });

      it("projects inclusively, with and without _id, and on dotted paths", async () => {
        const t = await seeded();
        const [ada] = await driver.find(t, { filter: { _id: ids[0] }, projection: { name: 1, age: 1 } });
        expect(ada).toEqual({ _id: ids[0], name: "ada", age: 36 });
        const [bare] = await driver.find(t, { filter: { _id: ids[0] }, projection: { name: 1, _id: 0 } });
        expect(bare).toEqual({ name: "ada" });
        const [city] = await driver.find(t, { filter: { _id: ids[0] }, projection: { "address.city": 1 } });
        expect(city).toEqual({ _id: ids[0], address: { city: "london" } });
      });

      it("projects exclusively", async () => {
        const t = await seeded();
        const [ada] = await driver.find(t, { filter: { _id: ids[0] }, projection: { address: 0, tags: 0, born: 0 } });
        expect(ada).toEqual({ _id: ids[0], name: "ada", age: 36, owner });
      });

      it("sorts on a field the projection leaves out", async () => {
        const t = await seeded();
        const docs = await driver.find(t, { filter: {}, sort: [["age", -1]], limit: 2, projection: { name: 1, _id: 0 } });
        expect(docs).toEqual([{ name: "donald" }, { name: "grace" }]);
      });

      it("counts with and without a filter", async () => {
        const t = await seeded();
        expect(await driver.count(t, {})).toBe(6);
        expect(await driver.count(t, { tags: "math" })).toBe(3);
        expect(await driver.count(t, { age: { $gte: 50, $lt: 80 } })).toBe(2);
        expect(await driver.count(t, { name: "nobody" })).toBe(0);
      });
    });

    runKeysetConformance(() => driver, target);

    describe("unique indexes and all-or-nothing inserts", () => {
      const unique = async (sparse = false): Promise<Target> => {
        const t = target("accounts");
        await driver.createIndexes(t, [{ keys: [["email", 1]], unique: true, sparse, name: "email_unique" }]);
        return t;
      };

      it("a batch repeating an _id stores nothing", async () => {
        const t = target();
        const id = new ObjectId();
        const error = await rejection(driver.insertMany(t, [{ _id: new ObjectId(), n: 1 }, { _id: id, n: 2 }, { _id: id, n: 3 }]));
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(await driver.count(t, {})).toBe(0);
      });

      it("a batch repeating a stored _id stores nothing", async () => {
        const t = await seeded();
        const error = await rejection(driver.insertMany(t, [{ _id: new ObjectId(), name: "new" }, { _id: ids[2], name: "clash" }]));
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect((error as DuplicateKeyError).keyValue).toEqual({ _id: ids[2] });
        expect(await driver.count(t, {})).toBe(6);
        expect(await find(t, { _id: ids[2] })).toEqual(["grace"]);
      });

      it("a batch breaking a unique index within itself stores nothing", async () => {
        const t = await unique();
        const error = await rejection(driver.insertMany(t, [{ email: "a@x" }, { email: "b@x" }, { email: "a@x" }]));
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect((error as DuplicateKeyError).keyValue).toEqual({ email: "a@x" });
        expect(await driver.count(t, {})).toBe(0);
      });

      it("a batch breaking a unique index against stored documents stores nothing", async () => {
        const t = await unique();
        await driver.insertMany(t, [{ email: "a@x" }]);
        const error = await rejection(driver.insertMany(t, [{ email: "b@x" }, { email: "a@x" }]));
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect((error as DuplicateKeyError).keyValue).toEqual({ email: "a@x" });
        expect(await driver.count(t, {})).toBe(1);
      });

      it("a sparse unique index lets documents without the field coexist", async () => {
        const t = await unique(true);
        await driver.insertMany(t, [{ name: "one" }, { name: "two" }, { email: "a@x" }]);
        expect(await driver.count(t, {})).toBe(3);
        expect(await rejection(driver.insertMany(t, [{ email: "a@x" }]))).toBeInstanceOf(DuplicateKeyError);
      });

      it("a non-sparse unique index treats a missing field as null", async () => {
        const t = await unique(false);
        await driver.insertMany(t, [{ name: "one" }]);
        expect(await rejection(driver.insertMany(t, [{ name: "two" }]))).toBeInstanceOf(DuplicateKeyError);
      });

      it("replaceOne and updateOne cannot take another document's unique value", async () => {
        const t = await unique();
        const a = new ObjectId();
        const b = new ObjectId();
        await driver.insertMany(t, [{ _id: a, email: "a@x" }, { _id: b, email: "b@x" }]);
        expect(await rejection(driver.replaceOne(t, { _id: b }, { email: "a@x" }))).toBeInstanceOf(DuplicateKeyError);
        expect(await rejection(driver.updateOne(t, { _id: b }, { $set: { email: "a@x" } }))).toBeInstanceOf(DuplicateKeyError);
        expect(await driver.find(t, { filter: { _id: b } })).toEqual([{ _id: b, email: "b@x" }]);
        // Keeping one's own value, or freeing a value and taking it, is fine.
        expect(await driver.updateOne(t, { _id: b }, { $set: { email: "b@x", n: 1 } })).toBe(true);
        expect(await driver.updateOne(t, { _id: a }, { $set: { email: "c@x" } })).toBe(true);
        expect(await driver.replaceOne(t, { _id: b }, { email: "a@x" })).toBe(true);
      });

      // The data layer reports such an index and serves the collection without it (src/data/layer.ts).
      it("a unique index over stored duplicates is refused with DuplicateKeyError, and other indexes still build", async () => {
        const t = target("accounts");
        await driver.insertMany(t, [{ email: "a@x" }, { email: "a@x" }, { email: "b@x" }]);
        const error = await rejection(driver.createIndexes(t, [{ keys: [["email", 1]], unique: true, sparse: true, name: "email_unique" }]));
        expect(error).toBeInstanceOf(DuplicateKeyError);
        expect(Object.keys((error as DuplicateKeyError).keyValue)).toEqual(["email"]);
        await driver.createIndexes(t, [{ keys: [["name", 1]], unique: true, sparse: true, name: "name_unique" }]);
        expect(await rejection(driver.insertMany(t, [{ name: "n" }, { name: "n" }]))).toBeInstanceOf(DuplicateKeyError);
        // The collection stays usable, duplicates and all.
        await driver.insertMany(t, [{ email: "a@x" }]);
        expect(await driver.count(t, { email: "a@x" })).toBe(3);
      });

      it("a deleted document frees its unique value", async () => {
        const t = await unique();
        await driver.insertMany(t, [{ email: "a@x" }]);
        await driver.deleteMany(t, { email: "a@x" });
        await driver.insertMany(t, [{ email: "a@x" }]);
        expect(await driver.count(t, { email: "a@x" })).toBe(1);
      });

      it("createIndexes is idempotent", async () => {
        const t = await unique();
        await driver.createIndexes(t, [{ keys: [["email", 1]], unique: true, sparse: false, name: "email_unique" }]);
        await driver.createIndexes(t, [{ keys: [["age", 1]] }, { keys: [["age", 1]] }]);
        await driver.insertMany(t, [{ email: "a@x", age: 1 }, { email: "b@x", age: 1 }]);
        expect(await driver.count(t, { age: 1 })).toBe(2);
      });

      it("a unique index over duplicate data is refused and not created", async () => {
        const t = target("accounts");
        await driver.insertMany(t, [{ email: "a@x" }, { email: "a@x" }]);
        await expect(driver.createIndexes(t, [{ keys: [["email", 1]], unique: true, name: "email_unique" }])).rejects.toThrow();
        await driver.insertMany(t, [{ email: "a@x" }]);
        expect(await driver.count(t, { email: "a@x" })).toBe(3);
      });
    });

    describe("conditional writes", () => {
      const versioned = async (): Promise<{ t: Target; id: ObjectId }> => {
        const t = target("items");
        const id = new ObjectId();
        await driver.insertMany(t, [{ _id: id, title: "v1", _etag: "e1" }]);
        return { t, id };
      };

      it("only one of two replaces holding the same ETag succeeds", async () => {
        const { t, id } = await versioned();
        const results = await Promise.all([
          driver.replaceOne(t, { _id: id, _etag: "e1" }, { title: "left", _etag: "e2" }),
          driver.replaceOne(t, { _id: id, _etag: "e1" }, { title: "right", _etag: "e3" }),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
        const [stored] = await driver.find(t, { filter: { _id: id } });
        expect(stored!.title).toBe(results[0] ? "left" : "right");
      });

      it("only one of two updates holding the same ETag succeeds", async () => {
        const { t, id } = await versioned();
        const results = await Promise.all([
          driver.updateOne(t, { _id: id, _etag: "e1" }, { $set: { title: "left", _etag: "e2" } }),
          driver.updateOne(t, { _id: id, _etag: "e1" }, { $set: { title: "right", _etag: "e3" } }),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it("a stale ETag cannot replace, update or delete", async () => {
        const { t, id } = await versioned();
        expect(await driver.updateOne(t, { _id: id, _etag: "e1" }, { $set: { title: "v2", _etag: "e2" } })).toBe(true);
        expect(await driver.replaceOne(t, { _id: id, _etag: "e1" }, { title: "stale", _etag: "x" })).toBe(false);
        expect(await driver.updateOne(t, { _id: id, _etag: "e1" }, { $set: { title: "stale" } })).toBe(false);
        expect(await driver.deleteOne(t, { _id: id, _etag: "e1" })).toBe(false);
        expect(await driver.find(t, { filter: { _id: id } })).toEqual([{ _id: id, title: "v2", _etag: "e2" }]);
        expect(await driver.deleteOne(t, { _id: id, _etag: "e2" })).toBe(true);
      });
    });

    describe("aggregate", () => {
      it("$match, $sort and a $facet of a count and a page", async () => {
        const t = await seeded();
        const result = await driver.aggregate(t, [
          { $match: { age: { $gt: 40 } } },
          { $sort: { age: 1 } },
          { $facet: { total: [{ $count: "count" }], page: [{ $skip: 1 }, { $limit: 2 }, { $project: { _id: 0, name: 1 } }] } },
        ]);
        expect(result).toEqual([{ total: [{ count: 5 }], page: [{ name: "barbara" }, { name: "edsger" }] }]);
      });

      it.skipIf(options.emulated)("a $count over nothing yields no document, as in MongoDB", async () => {
        const t = await seeded();
        const result = await driver.aggregate(t, [{ $match: { age: { $gt: 1000 } } }, { $facet: { total: [{ $count: "count" }], page: [{ $limit: 2 }] } }]);
        expect(result).toEqual([{ total: [], page: [] }]);
      });

      it("$group, $unwind and $project", async () => {
        const t = await seeded();
        const result = await driver.aggregate(t, [
          { $unwind: "$tags" },
          { $group: { _id: "$tags", people: { $sum: 1 }, oldest: { $max: "$age" } } },
          { $match: { people: { $gt: 1 } } },
          { $project: { _id: 0, tag: "$_id", people: 1, oldest: 1 } },
        ]);
        expect(result).toEqual([{ tag: "math", people: 3, oldest: 87 }]);
      });

      it("$lookup reads another collection of the same database", async () => {
        const t = await seeded();
        const cities = { database: t.database, collection: "cities" };
        await driver.insertMany(cities, [{ name: "london", country: "uk" }, { name: "austin", country: "us" }]);
        const result = await driver.aggregate(t, [
          { $match: { name: { $in: ["alan", "edsger"] } } },
          { $lookup: { from: "cities", localField: "address.city", foreignField: "name", as: "city" } },
          { $sort: { name: 1 } },
          { $project: { _id: 0, name: 1, country: { $first: "$city.country" } } },
        ]);
        expect(result).toEqual([{ name: "alan", country: "uk" }, { name: "edsger", country: "us" }]);
      });

      it("a missing collection aggregates as empty", async () => {
        expect(await driver.aggregate(target("nothing"), [{ $match: {} }, { $sort: { a: 1 } }])).toEqual([]);
      });
    });

    describe("databases and collections", () => {
      it("keeps databases apart", async () => {
        const a = target();
        const b = { database: freshDatabase(), collection: a.collection };
        const id = new ObjectId();
        await driver.insertMany(a, [{ _id: id, where: "a" }]);
        await driver.insertMany(b, [{ _id: id, where: "b" }]);
        expect(await driver.find(a, { filter: {} })).toEqual([{ _id: id, where: "a" }]);
        expect(await driver.find(b, { filter: {} })).toEqual([{ _id: id, where: "b" }]);
        await driver.deleteMany(a, {});
        expect(await driver.count(b, {})).toBe(1);
      });

      it("keeps collections of one database apart", async () => {
        const a = target("one");
        const b = { database: a.database, collection: "two" };
        await driver.insertMany(a, [{ n: 1 }]);
        expect(await driver.count(b, {})).toBe(0);
      });

      it("reads a missing database or collection as empty", async () => {
        const t = target("missing");
        expect(await driver.find(t, { filter: { a: 1 }, sort: [["a", 1]] })).toEqual([]);
        expect(await driver.count(t, {})).toBe(0);
        expect(await driver.deleteMany(t, { a: 1 })).toBe(0);
        expect(await driver.deleteOne(t, { a: 1 })).toBe(false);
        expect(await driver.replaceOne(t, { a: 1 }, { a: 2 })).toBe(false);
        expect(await driver.updateOne(t, { a: 1 }, { $set: { a: 2 } })).toBe(false);
      });
    });

    describe("isolation of returned and given documents", () => {
      it("changing a returned document does not change the stored one", async () => {
        const t = await seeded();
        const [ada] = await driver.find(t, { filter: { _id: ids[0] } });
        (ada!.address as Doc).city = "changed";
        (ada!.tags as string[]).push("changed");
        (ada!.born as Date).setTime(0);
        ada!.name = "changed";
        const [again] = await driver.find(t, { filter: { _id: ids[0] } });
        expect(again).toEqual(people()[0]);
        const [aggregated] = await driver.aggregate(t, [{ $match: { _id: ids[0] } }]);
        (aggregated!.address as Doc).city = "changed";
        expect(await find(t, { "address.city": "changed" })).toEqual([]);
      });

      it("changing a projected document does not change the stored one (flat and dotted projections)", async () => {
        const t = await seeded();
        const projections: Projection[] = [{ address: 1, tags: 1, born: 1 }, { name: 0 }, { "address.city": 1, tags: 1, born: 1 }];
        for (const projection of projections) {
          const [shown] = await driver.find(t, { filter: { _id: ids[0] }, projection });
          (shown!.address as Doc).city = "changed";
          (shown!.tags as string[]).push("changed");
          (shown!.born as Date).setTime(0);
        }
        const [again] = await driver.find(t, { filter: { _id: ids[0] } });
        expect(again).toEqual(people()[0]);
      });

      it("changing a document after writing it does not change the stored one", async () => {
        const t = target();
        const id = new ObjectId();
        const doc: Doc = { _id: id, nested: { list: [1, 2] }, when: new Date(1000) };
        await driver.insertMany(t, [doc]);
        (doc.nested as { list: number[] }).list.push(3);
        (doc.when as Date).setTime(0);
        const replacement: Doc = { nested: { list: [9] } };
        await driver.replaceOne(t, { _id: id }, replacement);
        (replacement.nested as { list: number[] }).list.push(10);
        const values = { list: [7] };
        await driver.updateOne(t, { _id: id }, { $set: { other: values } });
        values.list.push(8);
        expect(await driver.find(t, { filter: { _id: id } })).toEqual([{ _id: id, nested: { list: [9] }, other: { list: [7] } }]);
      });
    });

    modifyContract(() => driver, target, options);

    describe("media", () => {
      const bytes = new Uint8Array([10, 20, 30, 40, 50, 60, 70, 80]);

      it("stores a file and reads it whole or by inclusive range", async () => {
        const store = driver.media(freshDatabase());
        const id = await store.put(bytes, { filename: "a.bin", contentType: "application/x-test", resource: "items" });
        expect(id).toMatch(/^[0-9a-f]{24}$/);
        const file = await store.get(id);
        expect(file).not.toBeNull();
        expect(file!.id).toBe(id);
        expect(file!.filename).toBe("a.bin");
        expect(file!.contentType).toBe("application/x-test");
        expect(file!.length).toBe(8);
        expect(file!.uploadDate).toBeInstanceOf(Date);
        expect(Array.from(await readAll(file!))).toEqual([10, 20, 30, 40, 50, 60, 70, 80]);
        expect(Array.from(await readAll(file!, { start: 2, end: 4 }))).toEqual([30, 40, 50]);
        expect(Array.from(await readAll(file!, { start: 7, end: 7 }))).toEqual([80]);
      });

      it("takes an upload as a Blob", async () => {
        const store = driver.media(freshDatabase());
        const id = await store.put(new Blob([bytes]), { contentType: "image/png" });
        const file = await store.get(id);
        expect(file!.length).toBe(8);
        expect(Array.from(await readAll(file!))).toEqual(Array.from(bytes));
      });

      it("keeps the stored bytes apart from the caller's", async () => {
        const store = driver.media(freshDatabase());
        const input = bytes.slice();
        const id = await store.put(input, { contentType: "application/octet-stream" });
        input[0] = 99;
        const file = await store.get(id);
        const read = await readAll(file!);
        read[1] = 99;
        expect(Array.from(await readAll((await store.get(id))!))).toEqual(Array.from(bytes));
      });

      it("deletes files, and knows nothing of unknown ids or other databases", async () => {
        const database = freshDatabase();
        const store = driver.media(database);
        const id = await store.put(bytes, { contentType: "text/plain" });
        expect(await driver.media(freshDatabase()).get(id)).toBeNull();
        expect(await store.get(new ObjectId().toHexString())).toBeNull();
        await store.delete(id);
        expect(await store.get(id)).toBeNull();
        await store.delete(id);
      });
    });

    describe("rate-limit counts and readiness", () => {
      it("counts hits per key and window, every one of concurrent hits once (a store only one process serves keeps none)", async (context) => {
        if (!driver.countHit) {
          expect(driver.kind).toBe("memory");
          return context.skip();
        }
        const key = `GET:ip:${new ObjectId().toHexString()}`;
        const end = Date.now() + 60_000;
        const countHit = driver.countHit.bind(driver);
        expect(await countHit(key, end)).toBe(1);
        const counts = await Promise.all(Array.from({ length: 20 }, () => countHit(key, end)));
        expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
        expect(await countHit(key, end + 60_000)).toBe(1);
        expect(await countHit(`${key}:other`, end)).toBe(1);
      });

      it("answers a ping", async () => {
        await expect(driver.ping()).resolves.toBeUndefined();
      });
    });
  });
}
