// The operations log: one entry per write, audit fields, `extra` from on_oplog_push, the
// read-only OPLOG_ENDPOINT with settings of its own, user-restricted entries.
import { afterAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import { TokenAuth } from "../../src/auth/auth.ts";
import { createHandler } from "../../src/handler.ts";
import { createLogger } from "../../src/logging.ts";
import type { RequestContext } from "../../src/context.ts";
import type { Doc } from "../../src/drivers/types.ts";
import type { Settings } from "../../src/settings/types.ts";

const HEX = "[a-f0-9]{24}";
const IP = { "CF-Connecting-IP": "203.0.113.7" };

function settings(overrides: Partial<Settings> = {}): Settings {
  return {
    OPLOG: true,
    OPLOG_ENDPOINT: "oplog",
    RESOURCE_METHODS: ["GET", "POST", "DELETE"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    DOMAIN: {
      people: { schema: { name: { type: "string" }, age: { type: "integer" } } },
      invoices: { url: `people/<regex("${HEX}"):person>/invoices`, schema: { person: { type: "objectid" }, n: { type: "integer" } } },
      audits: { internal_resource: true, schema: { what: { type: "string" } } },
    },
    ...overrides,
  };
}

/** The log's entries, oldest first. */
async function entries(api: ReturnType<typeof testApi>, query = ""): Promise<any[]> {
  const response = await api.get(`/oplog?sort=_id${query}`);
  expect(response.status).toBe(200);
  return (await json(response))._items;
}

describe("oplog", () => {
  const api = testApi(settings());
  afterAll(() => api.close());

  it("logs every write with its operation, endpoint, id, time and audit fields", async () => {
    const created = await json(await api.post("/people", { name: "Ada", age: 36 }, IP));
    let [entry] = await entries(api);
    expect(Object.keys(entry).sort()).toEqual(["_created", "_etag", "_id", "_links", "_updated", "i", "ip", "o", "r", "u"]);
    expect(entry).toMatchObject({ r: "people", o: "POST", i: created._id, ip: "203.0.113.7", u: "n/a", _created: created._created, _updated: created._updated });
    expect(entry._links.self.href).toBe(`oplog/${entry._id}`);

    const patched = await json(await api.patch(`/people/${created._id}`, { age: 37 }, { "If-Match": created._etag, ...IP }));
    entry = (await entries(api))[1];
    expect(entry).toMatchObject({ o: "PATCH", i: created._id, c: { age: 37 }, _updated: patched._updated });

    const replaced = await json(await api.put(`/people/${created._id}`, { name: "Ada L." }, { "If-Match": patched._etag }));
    entry = (await entries(api))[2];
    expect(entry).toMatchObject({ o: "PUT", i: created._id, c: { name: "Ada L.", _id: created._id, _created: created._created } });
    expect(entry.c).not.toHaveProperty("_etag");
    expect(entry.ip).toBeNull();

    expect((await api.delete(`/people/${created._id}`, { "If-Match": replaced._etag })).status).toBe(204);
    entry = (await entries(api))[3];
    expect(entry).toMatchObject({ o: "DELETE", i: created._id, c: { name: "Ada L.", _id: created._id } });
    expect(entry.c).not.toHaveProperty("_updated");
  });

  it("names a sub-resource by its url pattern and one entry per document of a bulk insert", async () => {
    const person = (await json(await api.post("/people", { name: "Bob" })))._id;
    const created = await json(await api.post(`/people/${person}/invoices`, [{ n: 1 }, { n: 2 }]));
    const logged = await entries(api, `&where=${encodeURIComponent(JSON.stringify({ r: "people/<person>/invoices" }))}`);
    expect(logged.map((e) => e.i)).toEqual(created._items.map((d: any) => d._id));
  });

  it("leaves internal resources and internal calls on them out, logs internal calls on public ones", async () => {
    const before = (await entries(api)).length;
    await api.handler.app.internal.post("audits", { what: "x" });
    expect(await entries(api)).toHaveLength(before);
    await api.handler.app.internal.post("people", { name: "Cy" });
    expect((await entries(api)).slice(before).map((e) => [e.o, e.ip])).toEqual([["POST", null]]);
  });

  it("is read-only", async () => {
    const [entry] = await entries(api);
    expect((await api.post("/oplog", { r: "x" })).status).toBe(405);
    expect((await api.delete("/oplog")).status).toBe(405);
    expect((await api.patch(`/oplog/${entry._id}`, { r: "x" }, { "If-Match": entry._etag })).status).toBe(405);
    expect((await api.get(`/oplog/${entry._id}`)).status).toBe(200);
  });
});

describe("oplog settings", () => {
  it("logs only OPLOG_METHODS, and changes only for OPLOG_CHANGE_METHODS", async () => {
    const api = testApi(settings({ OPLOG_METHODS: ["POST", "PATCH"], OPLOG_CHANGE_METHODS: ["POST"] }));
    const created = await json(await api.post("/people", { name: "Ada" }));
    await api.patch(`/people/${created._id}`, { age: 1 }, { "If-Match": created._etag });
    const logged = await entries(api);
    expect(logged.map((e) => e.o)).toEqual(["POST", "PATCH"]);
    expect(logged[0].c).toEqual({ name: "Ada", _created: created._created, _id: created._id });
    expect(logged[1]).not.toHaveProperty("c");
    await api.close();
  });

  it("logs a soft delete as a DELETE of the marked document", async () => {
    const api = testApi(settings({ SOFT_DELETE: true }));
    const created = await json(await api.post("/people", { name: "Ada" }));
    expect((await api.delete(`/people/${created._id}`, { "If-Match": created._etag })).status).toBe(204);
    const [, deleted] = await entries(api);
    expect(deleted).toMatchObject({ o: "DELETE", i: created._id, c: { name: "Ada", _deleted: true } });
    await api.close();
  });

  it("without OPLOG_AUDIT keeps no ip, user or changes", async () => {
    const api = testApi(settings({ OPLOG_AUDIT: false }));
    const created = await json(await api.post("/people", { name: "Ada" }, IP));
    await api.patch(`/people/${created._id}`, { age: 1 }, { "If-Match": created._etag });
    const stored = (await api.handler.app.data.find(null, api.handler.app.config.DOMAIN.oplog!)).documents;
    expect(stored.map((e) => Object.keys(e).sort())).toEqual([
      ["_created", "_id", "_updated", "i", "o", "r"],
      ["_created", "_id", "_updated", "i", "o", "r"],
    ]);
    await api.close();
  });

  it("stores what on_oplog_push adds; returns `extra` only with OPLOG_RETURN_EXTRA_FIELD", async () => {
    for (const returned of [false, true]) {
      const api = testApi(settings({ OPLOG_RETURN_EXTRA_FIELD: returned }));
      api.handler.app.on("on_oplog_push", (resource: string, pushed: Doc[]) => {
        for (const entry of pushed) entry.extra = { resource, by: "hook" };
      });
      await api.post("/people", { name: "Ada" });
      const [entry] = await entries(api);
      if (returned) expect(entry.extra).toEqual({ resource: "people", by: "hook" });
      else expect(entry).not.toHaveProperty("extra");
      const [stored] = (await api.handler.app.data.find(null, api.handler.app.config.DOMAIN.oplog!)).documents;
      expect(stored!.extra).toEqual({ resource: "people", by: "hook" });
      await api.close();
    }
  });

  it("without OPLOG_ENDPOINT the log is internal, still written", async () => {
    const api = testApi(settings({ OPLOG_ENDPOINT: null }));
    await api.post("/people", { name: "Ada" });
    expect((await api.get("/oplog")).status).toBe(404);
    expect((await json(await api.get("/")))._links.child.map((c: any) => c.href)).not.toContain("oplog");
    const { body } = await api.handler.app.internal.get("oplog");
    expect(body!._items).toMatchObject([{ r: "people", o: "POST" }]);
    await api.close();
  });

  it("OPLOG off: no log resource, nothing written", async () => {
    const api = testApi(settings({ OPLOG: false }));
    await api.post("/people", { name: "Ada" });
    expect((await api.get("/oplog")).status).toBe(404);
    expect(api.handler.app.config.DOMAIN).not.toHaveProperty("oplog");
    await api.close();
  });
});

/** Token = user name; the check makes it the request's auth value. */
class Users extends TokenAuth {
  override checkAuth(token: string, _roles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean {
    if (!["alice", "bob"].includes(token)) return false;
    ctx.setRequestAuthValue(token);
    return true;
  }
}

describe("oplog with authentication", () => {
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it("says at start-up when anyone may read a log of resources that need authentication", () => {
    const warnings = (overrides: Partial<Settings>) => {
      const said: string[] = [];
      createHandler(settings(overrides), { logger: createLogger((record) => void (record.level === "WARNING" && said.push(record.message))) });
      return said;
    };
    const guarded: Settings["DOMAIN"] = { ...settings().DOMAIN, notes: { authentication: Users, auth_field: "owner", schema: { text: { type: "string" } } } };
    expect(warnings({ DOMAIN: guarded })).toEqual([expect.stringMatching(/^OPLOG_ENDPOINT: anyone may read the log, which records the writes to 'notes', .*DOMAIN\['oplog'\]/)]);
    expect(warnings({ DOMAIN: { ...guarded, oplog: { authentication: Users } } })).toEqual([]);
    expect(warnings({ DOMAIN: { ...guarded, oplog: { authentication: Users, public_methods: ["GET"] } } })).toEqual([expect.stringMatching(/: take GET out of its public_methods$/)]);
    expect(warnings({ AUTH: Users, PUBLIC_METHODS: ["GET"], DOMAIN: guarded })).toEqual([expect.stringMatching(/: take GET out of its public_methods$/)]);
    expect(warnings({ AUTH: Users, DOMAIN: guarded })).toEqual([]);
    // An aggregation endpoint takes no writes: the log records none of its.
    const counted: Settings["DOMAIN"] = { ...guarded, counts: { authentication: Users, datasource: { source: "notes", aggregation: { pipeline: [{ $count: "n" }] } } } };
    expect(warnings({ DOMAIN: counted })).toEqual([expect.not.stringContaining("'counts'")]);
    expect(warnings({ OPLOG_ENDPOINT: null, DOMAIN: guarded })).toEqual([]);
    expect(warnings({})).toEqual([]);
  });

  it("the endpoint carries its own settings: auth on the log of a public API", async () => {
    const api = testApi(settings({ DOMAIN: { ...settings().DOMAIN, oplog: { authentication: Users } } }));
    await api.post("/people", { name: "Ada" });
    expect((await api.get("/oplog")).status).toBe(401);
    expect((await api.get("/oplog", bearer("alice"))).status).toBe(200);
    expect((await api.post("/oplog", {}, bearer("alice"))).status).toBe(405);
    await api.close();
  });

  it("entries name the user, and user-restricted access shows each user their own", async () => {
    const api = testApi(settings({ AUTH: Users, AUTH_FIELD: "owner" }));
    await api.post("/people", { name: "Ada" }, bearer("alice"));
    await api.post("/people", { name: "Bob" }, bearer("bob"));
    const alices = await json(await api.get("/oplog", bearer("alice")));
    expect(alices._items).toHaveLength(1);
    expect(alices._items[0]).toMatchObject({ r: "people", u: "alice", owner: "alice" });
    const stored = (await api.handler.app.data.find(null, api.handler.app.config.DOMAIN.oplog!)).documents;
    expect(stored.map((e) => e.owner).sort()).toEqual(["alice", "bob"]);
    await api.close();
  });
});
