// The sqlite driver's atomic updates (findOneAndUpdate, updateMany) beyond the shared contract:
// the same contract on a port without transactions (how it runs on D1), a failure injected half
// way through a write on either path, and processes incrementing one counter at once.
import { describe, expect, it } from "vitest";
import { retentionOf } from "../../src/drivers/change-log.ts";
import { createDriver } from "../../src/drivers/registry.ts";
import { SqliteDriver } from "../../src/drivers/sqlite/driver.ts";
import { openBunSqlite } from "../../src/drivers/sqlite/bun.ts";
import { openNodeSqlite } from "../../src/drivers/sqlite/node.ts";
import type { SqlPort, Statement } from "../../src/drivers/sqlite/port.ts";
import type { Doc, Target } from "../../src/drivers/types.ts";
import { runDriverConformance } from "./conformance.ts";
import { incrementInProcesses } from "./support/incrementers.ts";
import { hasSqlite, tempFiles } from "./support/sqlite.ts";

const available = await hasSqlite();
const onBun = !!(globalThis as { Bun?: unknown }).Bun;
const tempFile = tempFiles();

const openPort = async (path: string): Promise<SqlPort> => (onBun ? openBunSqlite(path) : openNodeSqlite(path));

/** A port as D1 is: statements and batches, no transaction holding the lock across JavaScript. */
const withoutTransactions = (port: SqlPort): SqlPort => ({ ...port, transaction: undefined });

describe.skipIf(!available)("sqlite driver without transactions (D1's way)", () => {
  runDriverConformance("sqlite, compare-and-swap batches", async (settings = {}) => SqliteDriver.open(withoutTransactions(await openPort(await tempFile())), "everest", retentionOf(settings)));
});

const UPDATE = /^UPDATE /;

/**
 * A port whose write fails half way: in a transaction, its fourth row update; in a batch, a
 * statement SQLite refuses right after the update that has changed the rows, which the batch
 * must then undo.
 */
function failing(port: SqlPort): SqlPort {
  let updates = 0;
  return {
    ...port,
    batch: (statements) => {
      const at = statements.findIndex((statement) => UPDATE.test(statement.sql));
      if (at < 0) return port.batch(statements);
      return port.batch([...statements.slice(0, at + 1), { sql: "SELECT no_such_function()", params: [] }, ...statements.slice(at + 1)]);
    },
    transaction: port.transaction
      ? (work) =>
          port.transaction!((tx) =>
            work({
              all: tx.all,
              run: (statement: Statement) => {
                if (UPDATE.test(statement.sql) && ++updates === 4) throw new Error("injected failure");
                return tx.run(statement);
              },
            }),
          )
      : undefined,
  };
}

describe.skipIf(!available)("sqlite driver: a failure half way through updateMany leaves every document as it was", () => {
  const t: Target = { collection: "things" };
  const docs = (): Doc[] => Array.from({ length: 6 }, (_, i) => ({ _id: i, n: i }));

  it.each([
    ["in a transaction", (port: SqlPort) => port],
    ["in a compare-and-swap batch", withoutTransactions],
  ])("%s", async (_label, shape) => {
    const path = await tempFile();
    const seed = await SqliteDriver.open(await openPort(path), "everest");
    await seed.insertMany(t, docs());
    const driver = await SqliteDriver.open(failing(shape(await openPort(path))), "everest");
    await expect(driver.updateMany(t, {}, { $inc: { n: 100 } })).rejects.toThrow();
    expect(await seed.find(t, { filter: {}, sort: [["_id", 1]] })).toEqual(docs());
    // And the next write goes through whole.
    const healthy = await SqliteDriver.open(shape(await openPort(path)), "everest");
    expect(await healthy.updateMany(t, {}, { $inc: { n: 100 } })).toHaveLength(6);
    expect((await seed.find(t, { filter: {}, sort: [["_id", 1]] })).map((d) => d.n)).toEqual([100, 101, 102, 103, 104, 105]);
    await Promise.all([seed.close(), driver.close(), healthy.close()]);
  });
});

describe.skipIf(!available || onBun)("sqlite driver: processes incrementing one counter at once", () => {
  it("lose no increment, with and without transactions", { timeout: 120_000 }, async () => {
    const path = await tempFile();
    const driver = await createDriver(`sqlite:${path}`, { databaseName: "everest", settings: {} });
    await driver.insertMany({ collection: "counters" }, [{ _id: "c", n: 0 }]);
    await incrementInProcesses(`sqlite:${path}`, "everest", 150, ["tx", "tx", "cas", "cas"]);
    expect((await driver.find({ collection: "counters" }, { filter: { _id: "c" } }))[0]!.n).toBe(600);
    await driver.close();
  });
});
