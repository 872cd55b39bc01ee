// A child process for the sqlite cross-process test: opens the sqlite driver on the file given
// (without transactions, D1's way, when asked), waits for "go" on stdin, then increments one
// counter `count` times with findOneAndUpdate and prints "done".
import { createInterface } from "node:readline";
import { SqliteDriver } from "../../../src/drivers/sqlite/driver.ts";
import { openNodeSqlite } from "../../../src/drivers/sqlite/node.ts";
import { openBunSqlite } from "../../../src/drivers/sqlite/bun.ts";

const [path, count, mode] = process.argv.slice(2) as [string, string, string];
const opened = (globalThis as { Bun?: unknown }).Bun ? await openBunSqlite(path) : await openNodeSqlite(path);
const port = mode === "cas" ? { ...opened, transaction: undefined } : opened;
const driver = await SqliteDriver.open(port, "everest");
const lines = createInterface({ input: process.stdin });
process.stdout.write("ready\n");
for await (const line of lines) if (line === "go") break;
for (let i = 0; i < Number(count); i++) await driver.findOneAndUpdate({ collection: "counters" }, { _id: "c" }, { $inc: { n: 1 } });
process.stdout.write("done\n");
await driver.close();
process.exit(0);
