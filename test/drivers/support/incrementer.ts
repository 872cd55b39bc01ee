// A child process for the cross-process tests of atomic updates: opens the driver of the URI given
// (a sqlite: one without transactions, D1's way, when the mode is "cas"), waits for "go" on
// stdin, then increments one counter `count` times with findOneAndUpdate and prints "done".
import { createInterface } from "node:readline";
import "../../../src/drivers/mongodb/index.ts";
import { createDriver } from "../../../src/drivers/registry.ts";
import { SqliteDriver } from "../../../src/drivers/sqlite/driver.ts";
import { openNodeSqlite } from "../../../src/drivers/sqlite/node.ts";
import { openBunSqlite } from "../../../src/drivers/sqlite/bun.ts";
import type { Driver, Target } from "../../../src/drivers/types.ts";

const [uri, count, mode, database] = process.argv.slice(2) as [string, string, string, string];

async function open(): Promise<Driver> {
  if (!uri.startsWith("sqlite:")) return createDriver(uri, { databaseName: database, settings: {} });
  const path = uri.slice("sqlite:".length);
  const opened = (globalThis as { Bun?: unknown }).Bun ? await openBunSqlite(path) : await openNodeSqlite(path);
  return SqliteDriver.open(mode === "cas" ? { ...opened, transaction: undefined } : opened, database);
}

const driver = await open();
const target: Target = { collection: "counters" };
const lines = createInterface({ input: process.stdin });
process.stdout.write("ready\n");
for await (const line of lines) if (line === "go") break;
for (let i = 0; i < Number(count); i++) await driver.findOneAndUpdate(target, { _id: "c" }, { $inc: { n: 1 } });
process.stdout.write("done\n");
await driver.close();
process.exit(0);
