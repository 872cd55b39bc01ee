// Opening a database file that another process is setting up (src/drivers/sqlite/sync.ts): the
// switch to WAL can be refused as busy without SQLite waiting out busy_timeout, and opening then
// tries again instead of failing. Two instances started at once over a new file met it about one
// start in ten; here a connection refuses the switch as such a race does, the set number of times.
import { describe, expect, it } from "vitest";
import { createSqliteDriver } from "../../src/drivers/sqlite/index.ts";
import { bunPort } from "../../src/drivers/sqlite/bun.ts";
import { nodePort } from "../../src/drivers/sqlite/node.ts";
import type { SyncDatabase } from "../../src/drivers/sqlite/sync.ts";
import { hasSqlite, tempFiles } from "./support/sqlite.ts";

const tempFile = tempFiles();
const available = await hasSqlite();
const isBun = Boolean((globalThis as { Bun?: unknown }).Bun);

async function database(path: string): Promise<SyncDatabase> {
  if (isBun) {
    const { Database } = (await import("bun:sqlite" as string)) as { Database: new (path: string, options: object) => SyncDatabase };
    return new Database(path, { create: true, strict: true });
  }
  const { DatabaseSync } = (await import("node:sqlite" as string)) as { DatabaseSync: new (path: string) => SyncDatabase };
  return new DatabaseSync(path);
}

/** A connection whose `PRAGMA journal_mode` fails `times` times with SQLite's result `code`, as each binding reports it. */
function refusingWal(db: SyncDatabase, times: number, code: number, message: string): SyncDatabase & { refused: number } {
  const wrapped = {
    refused: 0,
    prepare: (sql: string) => db.prepare(sql),
    close: () => db.close(),
    exec(sql: string) {
      if (sql.startsWith("PRAGMA journal_mode") && wrapped.refused < times) {
        wrapped.refused++;
        throw Object.assign(new Error(message), { errcode: code, errno: code });
      }
      return db.exec(sql);
    },
  };
  return wrapped;
}

const port = (db: SyncDatabase) => (isBun ? bunPort(db) : nodePort(db));

describe.skipIf(!available)("sqlite: opening a file another process is setting up", () => {
  it("tries the switch to WAL again while it is refused as busy, then opens in WAL", async () => {
    const db = refusingWal(await database(await tempFile()), 3, 5, "database is locked");
    const opened = port(db);
    expect(db.refused).toBe(3);
    expect(await opened.all({ sql: "PRAGMA journal_mode", params: [] })).toEqual([{ journal_mode: "wal" }]);
    await opened.close();
  });

  it("fails at once on anything else", async () => {
    const db = refusingWal(await database(await tempFile()), 3, 1, "SQL logic error");
    expect(() => port(db)).toThrow(/SQL logic error/);
    expect(db.refused).toBe(1);
    db.close();
  });
});

describe.skipIf(!available)("sqlite: a file that cannot be opened", () => {
  it("is refused naming the file and the likely cause", async () => {
    const path = `${await tempFile()}.missing/data.db`;
    await expect(createSqliteDriver({ uri: `sqlite:${path}`, databaseName: "everest", settings: {} })).rejects.toThrow(
      `cannot open the SQLite database '${path}': unable to open database file (does its directory exist, and may this process write there?)`,
    );
  });
});

describe.skipIf(!available)("sqlite: a table another client drops while everest serves", () => {
  it("is answered as unavailable, not as an empty collection; a collection never written is empty", async () => {
    const path = await tempFile();
    const driver = await createSqliteDriver({ uri: `sqlite:${path}`, databaseName: "everest", settings: {} });
    const people = { collection: "people" };
    await driver.insertMany(people, [{ name: "ada" }]);
    const other = await database(path);
    other.exec('DROP TABLE "everest.people"');
    other.close();
    for (const read of [() => driver.find(people, { filter: {} }), () => driver.find(people, { filter: { name: "ada" } }), () => driver.deleteMany(people, {})]) {
      await expect(read()).rejects.toThrow(/the table of everest\.people is missing/);
    }
    expect(await driver.find({ collection: "never" }, { filter: {} })).toEqual([]);
    await driver.close();
  });
});
