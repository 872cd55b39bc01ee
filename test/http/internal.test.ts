// Internal resources: invisible and unreachable over HTTP, fully usable from server code through
// `app.internal` (validation, meta fields, hooks), which works on public resources as well.
import { afterAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import type { App } from "../../src/app.ts";
import { TokenAuth } from "../../src/auth/auth.ts";
import type { RequestContext } from "../../src/context.ts";
import type { Resource } from "../../src/settings/normalize.ts";
import type { Doc } from "../../src/drivers/types.ts";
import type { Settings } from "../../src/settings/types.ts";

function settings(): Settings {
  return {
    RESOURCE_METHODS: ["GET", "POST", "DELETE"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    DOMAIN: {
      people: {
        schema: {
          name: { type: "string", required: true },
          audit: { type: "objectid", data_relation: { resource: "transactions" } },
        },
      },
      transactions: {
        internal_resource: true,
        schema: {
          entities: { type: "list", schema: { type: "objectid" } },
          original_resource: { type: "string", required: true },
          amount: { type: "integer", default: 0 },
        },
      },
    },
  };
}

/** Eve's test_internal_endpoint: every insert into a public resource is logged internally. */
function logInserts(app: App): void {
  app.on("on_inserted", async (resource: string, documents: Doc[]) => {
    if (resource === "transactions") return;
    const reply = await app.internal.post("transactions", { entities: documents.map((d) => d._id), original_resource: resource });
    if (reply.status !== 201) throw new Error(`internal insert failed: ${JSON.stringify(reply.body)}`);
  });
}

describe("internal resources over HTTP", () => {
  const api = testApi(settings());
  logInserts(api.handler.app);
  afterAll(() => api.close());

  it("are not on the home page, not routed, not linked", async () => {
    const home = await json(await api.get("/"));
    expect(home._links.child.map((c: any) => c.href)).toEqual(["people"]);
    expect((await api.get("/transactions")).status).toBe(404);
    expect((await api.post("/transactions", { original_resource: "x" })).status).toBe(404);
    expect((await api.get("/transactions/0123456789abcdef01234567")).status).toBe(404);

    const audit = String((await api.handler.app.internal.post("transactions", { original_resource: "manual" })).body!._id);
    const created = await api.post("/people", { name: "Ada", audit });
    expect(created.status).toBe(201);
    const ada = await json(await api.get(`/people/${(await json(created))._id}`));
    expect(ada.audit).toBe(audit);
    expect(ada._links).not.toHaveProperty("related");
  });

  it("are written by hooks through app.internal, stamped like any document", async () => {
    const created = await json(await api.post("/people", [{ name: "Bob" }, { name: "Cy" }]));
    const { status, body } = await api.handler.app.internal.get("transactions", { original_resource: "people" }, { sort: "-_created" });
    expect(status).toBe(200);
    const entry = (body!._items as any[]).find((t: Doc) => (t.entities as unknown[]).length === 2);
    expect(entry.entities.map(String)).toEqual(created._items.map((d: any) => d._id));
    expect(entry).toMatchObject({ original_resource: "people", amount: 0 });
    expect(entry._created).toBeInstanceOf(Date);
    expect(entry._etag).toMatch(/^[0-9a-f]{40}$/);
  });
});

describe("app.internal", () => {
  const api = testApi(settings());
  const internal = api.handler.app.internal;
  const events: string[] = [];
  api.handler.app.on("on_insert_transactions", () => events.push("insert"));
  api.handler.app.on("on_pre_POST", () => events.push("pre"));
  afterAll(() => api.close());

  it("validates as POST does and stores nothing on failure", async () => {
    const failed = await internal.post("transactions", { amount: "lots" });
    expect(failed.status).toBe(422);
    expect(failed.body!._issues).toEqual({ amount: "must be of integer type", original_resource: "required field" });
    expect((await internal.get("transactions")).body!._meta).toMatchObject({ total: 0 });
    // Database hooks fire, request hooks do not.
    const created = await internal.post("transactions", { original_resource: "manual", amount: 5 });
    expect(created.status).toBe(201);
    expect(events).toEqual(["insert"]);
  });

  it("reads, patches, replaces and deletes items by lookup; writes are unconditional unless given an ETag", async () => {
    const id = (await internal.post("transactions", { original_resource: "a", amount: 1 })).body!._id;
    const item = await internal.getItem("transactions", { _id: String(id) });
    expect(item).toMatchObject({ status: 200, body: { original_resource: "a", amount: 1 } });

    // The server's own payload is used as it is (patchInternal copies it only to change it): left as given.
    const changes = { amount: 2 };
    const patched = await internal.patch("transactions", { _id: id }, changes);
    expect(patched.status).toBe(200);
    expect(changes).toEqual({ amount: 2 });
    expect((await internal.patch("transactions", { _id: id }, { amount: 3 }, { etag: "stale" })).status).toBe(412);
    const etag = patched.body!._etag as string;
    expect((await internal.patch("transactions", { _id: id }, { amount: 3 }, { etag })).status).toBe(200);

    const replaced = await internal.put("transactions", { _id: id }, { original_resource: "b" });
    expect(replaced.status).toBe(200);
    expect((await internal.getItem("transactions", { _id: id })).body).toMatchObject({ original_resource: "b", amount: 0 });

    expect((await internal.deleteItem("transactions", { _id: id })).status).toBe(204);
    expect((await internal.getItem("transactions", { _id: id })).status).toBe(404);
    expect((await internal.deleteItem("transactions", { _id: id })).status).toBe(404);
  });

  it("hands server code documents of its own: what it changes in them, however deep, is not stored", async () => {
    const id = (await internal.post("transactions", { original_resource: "own", entities: ["0123456789abcdef01234567"] })).body!._id;
    const item = (await internal.getItem("transactions", { _id: id })).body!;
    (item.entities as unknown[]).push("changed");
    (item._created as Date).setTime(0);
    const page = (await internal.get("transactions", { _id: id })).body!._items as Doc[];
    (page[0]!.entities as unknown[]).push("changed");
    (page[0]!._updated as Date).setTime(0);
    const again = (await internal.getItem("transactions", { _id: id })).body!;
    expect((again.entities as unknown[]).map(String)).toEqual(["0123456789abcdef01234567"]);
    expect((again._created as Date).getTime()).toBeGreaterThan(0);
    expect((again._updated as Date).getTime()).toBeGreaterThan(0);
  });

  it("creates at a given id with PUT, deletes by a lookup, 204 when nothing matches (Eve)", async () => {
    const id = "0123456789abcdef01234567";
    expect((await internal.put("transactions", { _id: id }, { original_resource: "upsert" })).status).toBe(201);
    expect((await internal.getItem("transactions", { _id: id })).body).toMatchObject({ original_resource: "upsert" });
    await internal.post("transactions", [{ original_resource: "bulk" }, { original_resource: "bulk" }]);
    expect((await internal.delete("transactions", { original_resource: "bulk" })).status).toBe(204);
    expect((await internal.get("transactions", { original_resource: "bulk" })).body!._items).toEqual([]);
    expect((await internal.delete("transactions", { original_resource: "bulk" })).status).toBe(204);
    expect((await internal.get("transactions", { original_resource: "upsert" })).body!._meta).toMatchObject({ total: 1 });
  });

  it("patches and deletes by filter, update operators where the resource allows them, checked first (docs/updates.md)", async () => {
    const counted = testApi({ UPDATE_OPERATORS: ["$inc"], DOMAIN: { counters: { schema: { group: { type: "string" }, n: { type: "integer", min: 0 } } } } });
    const app = counted.handler.app.internal;
    await app.post("counters", [{ group: "a", n: 0 }, { group: "a", n: 1 }, { group: "b", n: 0 }]);
    const patched = await app.patchWhere("counters", { group: "a" }, { $inc: { n: 1 } });
    expect(patched).toMatchObject({ status: 200, body: { _meta: { matched: 2, updated: 2 } } });
    expect((await app.patchWhere("counters", {}, { $inc: { n: -1 } })).status).toBe(422);
    expect((await app.patchWhere("counters", { group: "a" }, { $inc: { n: 1 } }, { maxAffected: 1 })).status).toBe(400);
    expect(((await app.get("counters", {}, { sort: "group,n" })).body!._items as Doc[]).map((d) => d.n)).toEqual([1, 2, 0]);
    const item = await app.patch("counters", { group: "b" }, { $inc: { n: 5 } });
    expect(item.status).toBe(200);
    expect(await app.deleteWhere("counters", { n: { $gte: 2 } })).toMatchObject({ status: 200, body: { _meta: { matched: 2, deleted: 2 } } });
    expect((await app.get("counters")).body!._items).toHaveLength(1);
    await counted.close();
  });

  it("refuses an unknown resource outright", async () => {
    await expect(internal.get("nothing")).rejects.toThrow("unknown resource 'nothing'");
  });
});

/** Token = user name, made the request's auth value. */
class Users extends TokenAuth {
  override checkAuth(token: string, _roles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean {
    ctx.setRequestAuthValue(token);
    return true;
  }
}

describe("app.internal on behalf of a request", () => {
  // A document feature counts the notes there are after each insert: all of them, and those
  // the writing user can see through `on`.
  const counts: Array<[number, number]> = [];
  const api = testApi(
    { AUTH: Users, AUTH_FIELD: "owner", RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { text: { type: "string" } } } } },
    {
      features: [
        {
          async afterInsert(ctx: RequestContext, resource: Resource) {
            const internal = api.handler.app.internal;
            const all = (await internal.get(resource.name)).body!._meta as Doc;
            const own = (await internal.get(resource.name, {}, {}, { on: ctx })).body!._meta as Doc;
            counts.push([all.total as number, own.total as number]);
          },
        },
      ],
    },
  );
  afterAll(() => api.close());

  it("takes the request's auth value, so user-restricted access holds", async () => {
    const as = (user: string) => ({ Authorization: `Bearer ${user}` });
    await api.post("/notes", { text: "a1" }, as("alice"));
    await api.post("/notes", { text: "b1" }, as("bob"));
    await api.post("/notes", { text: "a2" }, as("alice"));
    expect(counts).toEqual([[1, 1], [2, 1], [3, 2]]);
  });
});
