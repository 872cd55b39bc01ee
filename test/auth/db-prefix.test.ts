// Auth-driven database choice: a check calls ctx.setDbPrefix, which wins over the resource's
// db_prefix for that request; `<PREFIX>_DB_NAME` / `<PREFIX>_DB_URI` name the database or the
// driver instance; null is the default database.
import { afterEach, describe, expect, it } from "vitest";
import { BasicAuth } from "../../src/auth/auth.ts";
import type { RequestContext } from "../../src/context.ts";
import type { FileAccess } from "../../src/drivers/types.ts";
import type { ResourceSettings, Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

/** acme and globex work in their own databases; admin in the default one; guest leaves it alone. */
class Tenants extends BasicAuth {
  override checkAuth(username: string, _p: string, _r: string[], _res: string | null, _m: string, ctx: RequestContext): boolean {
    const prefixes: Record<string, string | null> = { acme: "ACME", globex: "GLOBEX", admin: null, ledger: "LEDGER" };
    if (username in prefixes) ctx.setDbPrefix(prefixes[username]!);
    return true;
  }
}

const as = (user: string) => ({ Authorization: "Basic " + btoa(`${user}:`) });
const writable = { resource_methods: ["GET", "POST"], schema: { title: { type: "string" } } } satisfies ResourceSettings;

const settings: Settings = {
  AUTH: Tenants,
  ACME_DB_NAME: "acme",
  GLOBEX_DB_NAME: "globex",
  ARCHIVE_DB_NAME: "archive",
  DOMAIN: { notes: writable, archive: { ...writable, db_prefix: "ARCHIVE" } },
};

let api: TestApi;
afterEach(() => api.close());

const titles = async (response: Response) => (await json(response))._items.map((d: { title: string }) => d.title);

describe("setDbPrefix", () => {
  it("keeps each tenant's data in its own database", async () => {
    api = testApi(settings);
    expect((await api.post("/notes", { title: "acme's" }, as("acme"))).status).toBe(201);
    expect((await api.post("/notes", { title: "globex's" }, as("globex"))).status).toBe(201);
    expect(await titles(await api.get("/notes", as("acme")))).toEqual(["acme's"]);
    expect(await titles(await api.get("/notes", as("globex")))).toEqual(["globex's"]);
    expect(await titles(await api.get("/notes", as("guest")))).toEqual([]);

    const app = api.handler.app;
    const { driver, target } = await app.data.bind({ dbPrefix: "ACME" } as RequestContext, app.config.DOMAIN.notes!);
    expect(target.database).toBe("acme");
    expect((await driver.find(target, { filter: {} })).map((d) => d.title)).toEqual(["acme's"]);
  });

  it("overrides the resource's db_prefix, and null selects the default database", async () => {
    api = testApi(settings);
    await api.post("/archive", { title: "archived" }, as("guest"));
    await api.post("/archive", { title: "default" }, as("admin"));
    await api.post("/notes", { title: "default note" }, as("guest"));
    expect(await titles(await api.get("/archive", as("guest")))).toEqual(["archived"]);
    expect(await titles(await api.get("/archive", as("admin")))).toEqual(["default"]);
    expect(await titles(await api.get("/notes", as("admin")))).toEqual(["default note"]);
  });

  it("reaches another driver instance through <PREFIX>_DB_URI", async () => {
    const written: string[] = [];
    const files: FileAccess = {
      read: async () => null,
      append: async (path, text) => void written.push(`${path}: ${text}`),
      truncate: async () => undefined,
      replacement: async () => ({ write: async () => undefined, commit: async () => undefined, discard: async () => undefined }),
      lock: async () => ({ release: async () => undefined }),
    };
    api = testApi({ ...settings, LEDGER_DB_URI: "file:ledger.jsonl" }, { services: { files } });
    await api.post("/notes", { title: "in memory only" }, as("guest"));
    expect(written).toEqual([]);
    await api.post("/notes", { title: "journaled" }, as("ledger"));
    expect(written.some((line) => line.startsWith("ledger.jsonl: ") && line.includes("journaled"))).toBe(true);
    expect(await titles(await api.get("/notes", as("ledger")))).toEqual(["journaled"]);
    expect(await titles(await api.get("/notes", as("guest")))).toEqual(["in memory only"]);
  });
});
