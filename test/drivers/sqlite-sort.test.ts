// Page-number reads sorted on the keys of a declared index (src/drivers/sqlite/keyset.ts,
// indexes.ts): SQLite walks the index instead of sorting every match, in MongoDB's order as the
// memory driver gives it, ties in natural order; and a database an earlier everest made, whose
// declared indexes have no such index, gets it when the settings next declare them.
import { describe, expect, it } from "vitest";
import { Decimal128, ObjectId } from "bson";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { createDriver } from "../../src/drivers/registry.ts";
import type { SqlPort } from "../../src/drivers/sqlite/port.ts";
import type { Doc, Driver, IndexSpec, Sort, Target } from "../../src/drivers/types.ts";
import { random } from "./support/random-documents.ts";
import { hasSqlite, tempFiles } from "./support/sqlite.ts";

const tempFile = tempFiles();
const available = await hasSqlite();
const t: Target = { collection: "books" };
const INDEXES: IndexSpec[] = [{ keys: [["v", 1]], name: "by_v" }, { keys: [["o.x", -1], ["v", 1]], name: "by_ox_v" }];

/** The query plans of the sorted reads `run` makes, a step indented under the one it belongs to. */
async function plans(driver: Driver, run: () => Promise<unknown>): Promise<string> {
  const held = driver as unknown as { port: SqlPort };
  const port = held.port;
  const details: string[] = [];
  held.port = { ...port, all: async (statement) => {
    if (statement.sql.includes("ORDER BY")) {
      const depth = new Map<unknown, number>([[0, 0]]);
      for (const row of (await port.all({ ...statement, sql: `EXPLAIN QUERY PLAN ${statement.sql}` }))!) {
        depth.set(row.id, (depth.get(row.parent) ?? 0) + 1);
        details.push(`${"  ".repeat(depth.get(row.id)! - 1)}${String(row.detail)}`);
      }
    }
    return port.all(statement);
  } };
  try {
    await run();
  } finally {
    held.port = port;
  }
  return details.join("\n");
}

describe.skipIf(!available)("sqlite driver: page-number reads sorted on a declared index's keys", () => {
  it("walk the index for the page's rowids, then sort only the page's rows (reversed: also each run of equal keys)", async () => {
    const sqlite = await createDriver("sqlite::memory:", { databaseName: "everest", settings: {} });
    await sqlite.createIndexes(t, INDEXES);
    await sqlite.insertMany(t, Array.from({ length: 200 }, (_, i) => ({ _id: new ObjectId(), v: new Date(i * 7919 % 200), o: { x: i % 5 } })));
    const read = (sort: Sort, sortsAlike?: boolean) => plans(sqlite, () => sqlite.find(t, { filter: {}, sort, skip: 150, limit: 25, sortsAlike }));
    // Indented: the subquery that cuts the page; the outer query sorts its 25 rows.
    for (const sortsAlike of [true, undefined]) {
      const ascending = await read([["v", 1]], sortsAlike);
      expect(ascending).toMatch(/^  SCAN .* USING COVERING INDEX .*by_v\/order$/m);
      expect(ascending).not.toMatch(/^  USE TEMP B-TREE/m);
    }
    const descending = await read([["v", -1]]);
    expect(descending).toMatch(/^  SCAN .* USING COVERING INDEX .*by_v\/order\n  USE TEMP B-TREE FOR LAST TERM OF ORDER BY$/m);
    for (const sort of [[["o.x", -1], ["v", 1]], [["o.x", 1]], [["o.x", 1], ["v", -1]]] as Sort[]) {
      const plan = await read(sort);
      expect(plan, JSON.stringify(sort)).toMatch(/^  SCAN .* USING COVERING INDEX .*by_ox_v\/order$/m);
      expect(plan, JSON.stringify(sort)).not.toMatch(/^  USE TEMP B-TREE FOR ORDER BY/m);
    }
    await sqlite.close();
  });

  it("give the memory driver's order: types, null with missing, nested paths, both directions, ties in natural order", { timeout: 60_000 }, async () => {
    const rand = random(20261129);
    const oids = Array.from({ length: 3 }, () => new ObjectId());
    const scalars: unknown[] = [null, undefined, -1, 0, 2, 2.5, 1e300, "", "a", "B", "é", "\u{1F600}", true, false, new Date(-8.64e15), new Date(-5000), new Date(0), new Date(8.64e15), Decimal128.fromString("1.5"), ...oids];
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const document = (): Doc => {
      const doc: Doc = { _id: new ObjectId() };
      const v = pick(scalars);
      if (v !== undefined) doc.v = v;
      if (rand() < 0.8) doc.o = rand() < 0.8 ? { x: pick(scalars) } : pick(["o", 3, null]);
      return doc;
    };
    const sqlite = await createDriver("sqlite::memory:", { databaseName: "everest", settings: {} });
    const memory = await MemoryDriver.open({ databaseName: "everest" });
    await sqlite.createIndexes(t, INDEXES);
    const seed = Array.from({ length: 300 }, document);
    await Promise.all([sqlite, memory].map((d) => d.insertMany(t, seed.map((doc) => ({ ...doc })))));
    const sorts: Sort[] = [[["v", 1]], [["v", -1]], [["o.x", 1]], [["o.x", -1]], [["o.x", -1], ["v", 1]], [["o.x", 1], ["v", -1]], [["v", -1], ["o.x", -1]]];
    const compare = async () => {
      for (const sort of sorts) {
        for (const [skip, limit] of [[0, 0], [7, 25], [290, 25]]) {
          const ids = async (d: Driver) => (await d.find(t, { filter: {}, sort, skip, limit })).map((doc) => String(doc._id));
          expect(await ids(sqlite), JSON.stringify({ sort, skip })).toEqual(await ids(memory));
        }
      }
    };
    await compare();
    // A Decimal128 below a double's range sorts after null, where its SQL key equals null's.
    const low = { _id: new ObjectId(), v: Decimal128.fromString("-1E+999"), o: { x: Decimal128.fromString("-1E+999") } };
    await Promise.all([sqlite, memory].map((d) => d.insertMany(t, [{ ...low }])));
    await compare();
    await sqlite.close();
  });

  it("are added to a database an earlier everest made, which opens and answers as before", async () => {
    const file = await tempFile();
    const earlier = await createDriver(`sqlite:${file}`, { databaseName: "everest", settings: {} });
    await earlier.createIndexes(t, [{ keys: [["v", 1]], name: "by_v", unique: true }]);
    await earlier.insertMany(t, Array.from({ length: 30 }, (_, i) => ({ _id: i, v: 29 - i })));
    // What the earlier version left: the spec recorded without a layout, and no order index.
    const port = (earlier as unknown as { port: SqlPort }).port;
    await port.batch([
      { sql: `DROP INDEX IF EXISTS "everest.books/by_v/order"`, params: [] },
      { sql: `UPDATE _everest_indexes SET spec = json_remove(spec, '$.layout')`, params: [] },
    ]);
    await earlier.close();
    const later = await createDriver(`sqlite:${file}`, { databaseName: "everest", settings: {} });
    expect((await later.find(t, { filter: {}, sort: [["v", 1]], skip: 2, limit: 3 })).map((doc) => doc._id)).toEqual([27, 26, 25]);
    await later.createIndexes(t, [{ keys: [["v", 1]], name: "by_v", unique: true }]);
    const plan = await plans(later, () => later.find(t, { filter: {}, sort: [["v", 1]], skip: 2, limit: 3, sortsAlike: true }));
    expect(plan).toMatch(/USING COVERING INDEX .*by_v\/order$/m);
    expect((await later.find(t, { filter: {}, sort: [["v", 1]], skip: 2, limit: 3 })).map((doc) => doc._id)).toEqual([27, 26, 25]);
    await expect(later.insertMany(t, [{ _id: 99, v: 3 }])).rejects.toThrow(/duplicate|unique/i);
    await later.close();
  });
});
