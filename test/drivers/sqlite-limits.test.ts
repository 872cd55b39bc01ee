// D1's limits on the sqlite driver: 2 MB per value and 100 KB per statement, refused with the
// messages D1 gives (D1_ERROR: … SQLITE_TOOBIG), played here by a port over the runtime's SQLite
// without transactions, as D1 runs. A document past the limit is the client's 413 with nothing
// stored; a filter whose statement is too long (long field names) is read by a scan, not a 500.
import { afterAll, describe, expect, it } from "vitest";
import { SqliteDriver } from "../../src/drivers/sqlite/driver.ts";
import { openBunSqlite } from "../../src/drivers/sqlite/bun.ts";
import { openNodeSqlite } from "../../src/drivers/sqlite/node.ts";
import { sqlError, type SqlPort, type Statement } from "../../src/drivers/sqlite/port.ts";
import { createHandler, type Handler } from "../../src/handler.ts";
import { createLogger } from "../../src/logging.ts";
import { hasSqlite, tempFiles } from "./support/sqlite.ts";

const available = await hasSqlite();
const tempFile = tempFiles();
const VALUE_LIMIT = 2_000_000;
const STATEMENT_LIMIT = 100_000;

/** Refuses what D1 refuses, as D1 words it, and as a port reports its failures (src/drivers/sqlite/d1.ts). */
function checked(statement: Statement): void {
  if (statement.sql.length > STATEMENT_LIMIT) throw sqlError(new Error("D1_ERROR: statement too long: SQLITE_TOOBIG"));
  if (statement.params.some((param) => typeof param === "string" && param.length > VALUE_LIMIT)) throw sqlError(new Error("D1_ERROR: string or blob too big: SQLITE_TOOBIG"));
}

function d1Like(port: SqlPort): SqlPort {
  return {
    ...port,
    transaction: undefined,
    all: (statement) => (checked(statement), port.all(statement)),
    run: (statement) => (checked(statement), port.run(statement)),
    batch: (statements) => (statements.forEach(checked), port.batch(statements)),
  };
}

describe.skipIf(!available)("sqlite driver within D1's limits", () => {
  let handler: Handler;
  afterAll(() => handler?.app.close());

  async function api(): Promise<Handler> {
    const path = await tempFile();
    const port = (globalThis as { Bun?: unknown }).Bun ? await openBunSqlite(path) : await openNodeSqlite(path);
    const settings = { RESOURCE_METHODS: ["GET", "POST"], ITEM_METHODS: ["GET", "PATCH"], DOMAIN: { items: { allow_unknown: true, schema: { code: { type: "string" }, big: { type: "string" } } } } } as const;
    handler = createHandler(structuredClone(settings) as never, { driver: await SqliteDriver.open(d1Like(port), "everest"), logger: createLogger(() => undefined) });
    return handler;
  }
  const send = (h: Handler, method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    h(new Request(`http://api.test${path}`, { method, headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) }));

  it("answers a document past 2 MB 413 and stores nothing of it, by POST and by PATCH", async () => {
    const h = await api();
    const big = "x".repeat(VALUE_LIMIT + 1000);
    const post = await send(h, "POST", "/items", [{ code: "a" }, { code: "b", big }]);
    expect(post.status).toBe(413);
    expect(await post.json()).toMatchObject({ _status: "ERR", _error: { code: 413 } });
    expect((await (await h(new Request("http://api.test/items"))).json())._meta.total).toBe(0);

    const created = await (await send(h, "POST", "/items", { code: "c", big: "y" })).json();
    const patch = await send(h, "PATCH", `/items/${created._id}`, { big }, { "If-Match": created._etag });
    expect(patch.status).toBe(413);
    const stored = await (await h(new Request(`http://api.test/items/${created._id}`))).json();
    expect(stored).toMatchObject({ big: "y", _etag: created._etag });
  });

  it("reads a filter whose statement is past 100 KB by a scan: its count and its page", async () => {
    const h = await api();
    const field = "f".repeat(30_000);
    await send(h, "POST", "/items", [{ code: "one", [field]: 1 }, { code: "two", [field]: 5 }]);
    const where = encodeURIComponent(JSON.stringify({ $or: [{ [field]: 1 }, { [field]: { $gt: 9 } }, { [field]: { $lt: 0 } }, { [field]: { $in: [2, 3] } }] }));
    const page = await h(new Request(`http://api.test/items?where=${where}`));
    expect(page.status).toBe(200);
    const body = await page.json();
    expect(body._items.map((item: { code: string }) => item.code)).toEqual(["one"]);
    expect(body._meta.total).toBe(1);
  });
});
