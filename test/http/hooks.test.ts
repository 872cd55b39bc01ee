// Event hooks (docs/decisions.md §3): Eve's names and arguments, generic then
// per-resource, in order, async awaited, several per event; a callback aborts with a status;
// pre-hooks add to the lookup; fetch hooks change what is sent while ETag and Last-Modified keep
// describing what is stored.
import type { HookName } from "../../src/events/hooks.ts";
import { ObjectId } from "bson";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { abort, HttpError } from "../../src/errors.ts";
import { createHandler } from "../../src/handler.ts";
import type { Doc } from "../../src/drivers/types.ts";
import type { FieldSchema, Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const settings: Settings = {
  DOMAIN: {
    people: {
      resource_methods: ["GET", "POST", "DELETE"],
      item_methods: ["GET", "PATCH", "PUT", "DELETE"],
      schema: {
        title: { type: "string", maxlength: 10 },
        touched: { type: "boolean" },
        place: { type: "dict", schema: { city: { type: "string" } } },
        tags: { type: "list" },
      },
    },
  },
};

let api: TestApi;
beforeEach(() => {
  api = testApi(settings);
});
afterEach(() => api.close());

// Names made in loops: checked when registered, as any name is.
const on = (event: string, callback: (...args: any[]) => unknown) => api.handler.app.on(event as HookName, callback);

async function create(body: Doc): Promise<{ _id: string; _etag: string; _updated: string }> {
  const response = await api.post("/people", body);
  expect(response.status).toBe(201);
  return json(response);
}

const EVENTS = [
  "on_pre_GET", "on_pre_POST", "on_pre_PATCH", "on_pre_PUT", "on_pre_DELETE",
  "on_post_GET", "on_post_POST", "on_post_PATCH", "on_post_PUT", "on_post_DELETE",
  "on_fetched_resource", "on_fetched_item", "on_insert", "on_inserted", "on_replace", "on_replaced",
  "on_update", "on_updated", "on_delete_item", "on_deleted_item",
  "on_delete_resource", "on_delete_resource_originals", "on_deleted_resource",
];

/** Records every event, generic and per-resource, with a readable summary of its arguments. */
function record(): Array<[string, ...unknown[]]> {
  const seen: Array<[string, ...unknown[]]> = [];
  const describe = (arg: unknown): unknown => {
    if (arg instanceof Request) return `request ${arg.method}`;
    if (arg instanceof Response) return `response ${arg.status}`;
    if (Array.isArray(arg)) return arg.map((d: Doc) => d.title);
    if (arg && typeof arg === "object") {
      const doc = arg as Doc;
      if ("_items" in doc) return `items ${(doc._items as Doc[]).length}`;
      if ("_id" in doc && Object.keys(doc).length === 1) return doc._id instanceof ObjectId ? "lookup _id" : doc;
      return "title" in doc ? `doc ${doc.title}` : doc;
    }
    return arg;
  };
  for (const event of EVENTS) {
    on(event, (...args: unknown[]) => void seen.push([event, ...args.map(describe)]));
    on(`${event}_people`, (...args: unknown[]) => void seen.push([`${event}_people`, ...args.map(describe)]));
  }
  return seen;
}

describe("names", () => {
  const domain = { DOMAIN: { people: {}, people_archive: {} } };

  it("a misspelt event or resource is refused when registered", () => {
    const refusal = (name: string) => `no event is called '${name}': hooks listen to Eve's events (docs/documents.md), or <event>_<resource> for a resource of DOMAIN`;
    expect(() => createHandler(domain, { hooks: { on_insrt: () => {} } as never })).toThrow(refusal("on_insrt"));
    expect(() => createHandler(domain, { hooks: { on_insert_peple: () => {} } })).toThrow(refusal("on_insert_peple"));
    const app = createHandler(domain).app;
    expect(() => app.on("on_fetched_itme" as HookName, () => {})).toThrow(refusal("on_fetched_itme"));
    expect(() => app.on("on_oplog_push_people" as HookName, () => {})).toThrow(refusal("on_oplog_push_people"));
    expect(() => app.on("on_delete_resource_originals_nobody" as HookName, () => {})).toThrow(refusal("on_delete_resource_originals_nobody"));
  });

  it("every event, generic and per resource, is accepted, resource names with underscores included", () => {
    const app = createHandler(domain).app;
    for (const name of ["on_pre_GET", "on_post_DELETE_people", "on_delete_resource_originals", "on_delete_resource_originals_people_archive", "on_fetched_diffs_people", "before_aggregation", "after_aggregation", "on_oplog_push"]) {
      expect(() => app.on(name as HookName, () => {})).not.toThrow();
    }
  });
});

describe("names, arguments and order", () => {
  it("POST: pre, insert, inserted, post", async () => {
    const seen = record();
    await api.post("/people", [{ title: "a" }, { title: "b" }]);
    expect(seen).toEqual([
      ["on_pre_POST", "people", "request POST"],
      ["on_pre_POST_people", "request POST"],
      ["on_insert", "people", ["a", "b"]],
      ["on_insert_people", ["a", "b"]],
      ["on_inserted", "people", ["a", "b"]],
      ["on_inserted_people", ["a", "b"]],
      ["on_post_POST", "people", "request POST", "response 201"],
      ["on_post_POST_people", "request POST", "response 201"],
    ]);
  });

  it("GET: pre with the lookup, fetched, post", async () => {
    const { _id } = await create({ title: "a" });
    const seen = record();
    await api.get("/people");
    await api.get(`/people/${_id}`);
    expect(seen).toEqual([
      ["on_pre_GET", "people", "request GET", {}],
      ["on_pre_GET_people", "request GET", {}],
      ["on_fetched_resource", "people", "items 1"],
      ["on_fetched_resource_people", "items 1"],
      ["on_post_GET", "people", "request GET", "response 200"],
      ["on_post_GET_people", "request GET", "response 200"],
      ["on_pre_GET", "people", "request GET", "lookup _id"],
      ["on_pre_GET_people", "request GET", "lookup _id"],
      ["on_fetched_item", "people", "doc a"],
      ["on_fetched_item_people", "doc a"],
      ["on_post_GET", "people", "request GET", "response 200"],
      ["on_post_GET_people", "request GET", "response 200"],
    ]);
  });

  it("PATCH and PUT: the changes and the stored original", async () => {
    const created = await create({ title: "a" });
    const seen = record();
    const patched = await json(await api.patch(`/people/${created._id}`, { title: "b" }, { "If-Match": created._etag }));
    await api.put(`/people/${created._id}`, { title: "c" }, { "If-Match": patched._etag });
    expect(seen).toEqual([
      ["on_pre_PATCH", "people", "request PATCH", "lookup _id"],
      ["on_pre_PATCH_people", "request PATCH", "lookup _id"],
      ["on_update", "people", "doc b", "doc a"],
      ["on_update_people", "doc b", "doc a"],
      ["on_updated", "people", "doc b", "doc a"],
      ["on_updated_people", "doc b", "doc a"],
      ["on_post_PATCH", "people", "request PATCH", "response 200"],
      ["on_post_PATCH_people", "request PATCH", "response 200"],
      ["on_pre_PUT", "people", "request PUT", "lookup _id"],
      ["on_pre_PUT_people", "request PUT", "lookup _id"],
      ["on_replace", "people", "doc c", "doc b"],
      ["on_replace_people", "doc c", "doc b"],
      ["on_replaced", "people", "doc c", "doc b"],
      ["on_replaced_people", "doc c", "doc b"],
      ["on_post_PUT", "people", "request PUT", "response 200"],
      ["on_post_PUT_people", "request PUT", "response 200"],
    ]);
  });

  it("DELETE: item and collection events", async () => {
    const a = await create({ title: "a" });
    await create({ title: "b" });
    const seen = record();
    await api.delete(`/people/${a._id}`, { "If-Match": a._etag });
    await api.delete("/people");
    expect(seen).toEqual([
      ["on_pre_DELETE", "people", "request DELETE", "lookup _id"],
      ["on_pre_DELETE_people", "request DELETE", "lookup _id"],
      ["on_delete_item", "people", "doc a"],
      ["on_delete_item_people", "doc a"],
      ["on_deleted_item", "people", "doc a"],
      ["on_deleted_item_people", "doc a"],
      ["on_post_DELETE", "people", "request DELETE", "response 204"],
      ["on_post_DELETE_people", "request DELETE", "response 204"],
      ["on_pre_DELETE", "people", "request DELETE", {}],
      ["on_pre_DELETE_people", "request DELETE", {}],
      ["on_delete_resource", "people"],
      ["on_delete_resource_people"],
      ["on_delete_resource_originals", "people", ["b"], {}],
      ["on_delete_resource_originals_people", ["b"], {}],
      ["on_deleted_resource", "people"],
      ["on_deleted_resource_people"],
      ["on_post_DELETE", "people", "request DELETE", "response 204"],
      ["on_post_DELETE_people", "request DELETE", "response 204"],
    ]);
  });

  it("DELETE of an empty collection: 204 with no originals or deleted events, as Eve", async () => {
    const seen = record();
    expect((await api.delete("/people")).status).toBe(204);
    expect(seen.map(([event]) => event)).toEqual([
      "on_pre_DELETE", "on_pre_DELETE_people", "on_delete_resource", "on_delete_resource_people",
      "on_post_DELETE", "on_post_DELETE_people",
    ]);
  });

  it("gives insert events only validated documents: none when the request fails validation", async () => {
    const seen = record();
    expect((await api.post("/people", [{ title: "ok" }, { title: "far too long" }])).status).toBe(422);
    expect(seen.map(([event]) => event)).toEqual(["on_pre_POST", "on_pre_POST_people"]);
  });
});

describe("callbacks", () => {
  it("run in registration order, async ones awaited, each seeing what the previous did", async () => {
    const order: string[] = [];
    on("on_insert_people", async (items: Doc[]) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push("first");
      items[0]!.title = "set by 1st";
    });
    on("on_insert_people", (items: Doc[]) => {
      order.push(`second saw ${items[0]!.title}`);
      items[0]!.touched = true;
    });
    on("on_insert", () => void order.push("generic"));
    const created = await create({ title: "sent" });
    expect(order).toEqual(["generic", "first", "second saw set by 1st"]);
    expect(await json(await api.get(`/people/${created._id}`))).toMatchObject({ title: "set by 1st", touched: true });
  });

  it("abort with a status, and nothing is written", async () => {
    on("on_insert_people", () => abort(403, "no new people today"));
    const refused = await api.post("/people", { title: "a" });
    expect(refused.status).toBe(403);
    expect(await json(refused)).toEqual({ _status: "ERR", _error: { code: 403, message: "no new people today" } });
    expect((await json(await api.get("/people")))._items).toEqual([]);
  });

  it("abort edits and deletes before anything changes", async () => {
    const created = await create({ title: "a" });
    on("on_update", () => abort(403));
    on("on_delete_item_people", () => abort(409, "still referenced"));
    on("on_pre_PUT", async () => abort(451));
    const headers = { "If-Match": created._etag };
    expect((await api.patch(`/people/${created._id}`, { title: "b" }, headers)).status).toBe(403);
    expect((await api.put(`/people/${created._id}`, { title: "b" }, headers)).status).toBe(451);
    expect((await api.delete(`/people/${created._id}`, headers)).status).toBe(409);
    expect(await json(await api.get(`/people/${created._id}`))).toMatchObject({ title: "a", _etag: created._etag });
  });

  it("abort with a status that is no HTTP error answers 500, as Werkzeug's abort does", async () => {
    on("on_insert_people", (documents: Doc[]) => {
      const status = Number(documents[0]!.title);
      if (status === 102) throw new HttpError(102);
      abort(status);
    });
    for (const status of [101, 102, 200, 302, 600, 999, 3.5]) {
      const refused = await api.post("/people", { title: String(status) });
      expect(refused.status, String(status)).toBe(500);
      expect(await json(refused)).toEqual({ _status: "ERR", _error: { code: 500, message: expect.any(String) } });
    }
    expect((await json(await api.get("/people")))._items).toEqual([]);
  });

  it("fail a request with 500 when they throw something other than an abort", async () => {
    on("on_pre_GET_people", () => {
      throw new TypeError("bug in a hook");
    });
    expect((await api.get("/people")).status).toBe(500);
  });
});

describe("pre-hooks", () => {
  it("add conditions to the lookup of reads, edits and deletes", async () => {
    const visible = await create({ title: "visible" });
    const hidden = await create({ title: "hidden" });
    const onlyVisible = (_request: Request, lookup: Doc) => void (lookup.title = "visible");
    for (const method of ["GET", "PATCH", "DELETE"]) on(`on_pre_${method}_people`, onlyVisible);
    expect((await json(await api.get("/people")))._items.map((d: Doc) => d.title)).toEqual(["visible"]);
    expect((await api.get(`/people/${hidden._id}`)).status).toBe(404);
    expect((await api.get(`/people/${visible._id}`)).status).toBe(200);
    expect((await api.patch(`/people/${hidden._id}`, { title: "x" }, { "If-Match": hidden._etag })).status).toBe(404);
    expect((await api.delete("/people")).status).toBe(204);
    api.handler.app.hooks.off("on_pre_GET_people", onlyVisible);
    expect((await json(await api.get("/people")))._items.map((d: Doc) => d.title)).toEqual(["hidden"]);
  });

  it("may read the request body, as Eve's read Flask's, and the method still gets it", async () => {
    // Reading it had taken the body from everest: a 500 called in process or through Hono.
    const read: unknown[] = [];
    on("on_pre_POST", async (_resource: string, request: Request) => void read.push(await request.json()));
    on("on_pre_PATCH_people", async (request: Request) => void read.push(await request.text()));
    const made = await create({ title: "body" });
    expect((await api.patch(`/people/${made._id}`, { title: "patched" }, { "If-Match": made._etag })).status).toBe(200);
    expect(read).toEqual([{ title: "body" }, '{"title":"patched"}']);
    expect((await json(await api.get(`/people/${made._id}`))).title).toBe("patched");
  });
});

describe("post-hooks", () => {
  it("may read the response body, and the client still gets it, with the headers they set", async () => {
    const made = await create({ title: "seen" });
    const read: unknown[] = [];
    on("on_post_GET_people", async (_request: Request, payload: Response) => {
      read.push((await payload.json()).title);
      payload.headers.set("X-Seen", "yes");
    });
    const response = await api.get(`/people/${made._id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-seen")).toBe("yes");
    expect((await json(response)).title).toBe("seen");
    expect(read).toEqual(["seen"]);
  });
});

describe("fetch hooks", () => {
  it("change what is sent for collections and items", async () => {
    const created = await create({ title: "a" });
    on("on_fetched_resource_people", (response: Doc) => {
      for (const item of response._items as Doc[]) item.badge = "★";
      delete response._meta;
    });
    on("on_fetched_item", (_resource: string, document: Doc) => void (document.title = "A"));
    const list = await json(await api.get("/people"));
    expect(list._items[0].badge).toBe("★");
    expect(list._meta).toBeUndefined();
    expect((await json(await api.get(`/people/${created._id}`))).title).toBe("A");
  });

  it("change what is sent, never what is stored, however deep they reach", async () => {
    const created = await create({ title: "a", place: { city: "Rome" }, tags: ["x"] });
    const deeper = (document: Doc) => {
      (document.place as Doc).city = "Oslo";
      (document.tags as string[]).push("y");
    };
    const forPage = (response: Doc) => (response._items as Doc[]).forEach(deeper);
    on("on_fetched_item_people", deeper);
    on("on_fetched_resource_people", forPage);
    for (let i = 0; i < 2; i++) {
      expect(await json(await api.get(`/people/${created._id}`))).toMatchObject({ place: { city: "Oslo" }, tags: ["x", "y"] });
      expect((await json(await api.get("/people")))._items[0]).toMatchObject({ place: { city: "Oslo" }, tags: ["x", "y"] });
    }
    api.handler.app.hooks.off("on_fetched_item_people", deeper).off("on_fetched_resource_people", forPage);
    expect(await json(await api.get(`/people/${created._id}`))).toMatchObject({ place: { city: "Rome" }, tags: ["x"] });
    expect((await json(await api.get("/people")))._items[0]).toMatchObject({ place: { city: "Rome" }, tags: ["x"] });
  });

  it("as a document feature's beforeRespond does", async () => {
    const beforeRespond = (_ctx: unknown, _resource: unknown, document: Doc) => {
      (document.place as Doc).city = "Oslo";
    };
    const featured = testApi(settings, { features: [{ beforeRespond }] });
    try {
      const created = await json(await featured.post("/people", { title: "a", place: { city: "Rome" } }));
      expect(await json(await featured.get(`/people/${created._id}`))).toMatchObject({ place: { city: "Oslo" } });
      expect((await json(await featured.get("/people")))._items[0]).toMatchObject({ place: { city: "Oslo" } });
      const raw = await featured.handler.app.data.findOne(null, featured.handler.app.config.DOMAIN.people!, { title: "a" });
      expect(raw!.place).toEqual({ city: "Rome" });
    } finally {
      await featured.close();
    }
  });

  it("leave ETag and Last-Modified describing the stored document", async () => {
    const created = await create({ title: "a" });
    on("on_fetched_item", (_resource: string, document: Doc) => {
      document.title = "changed on the way out";
      document._updated = new Date(0);
    });
    const response = await api.get(`/people/${created._id}`);
    expect(response.headers.get("etag")).toBe(`"${created._etag}"`);
    expect(response.headers.get("last-modified")).toBe(created._updated);
    expect((await api.patch(`/people/${created._id}`, { title: "b" }, { "If-Match": response.headers.get("etag")! })).status).toBe(200);
  });
});

describe("update hooks", () => {
  it("store what on_update adds, reflected in the ETag; what on_updated changes is not stored", async () => {
    const created = await create({ title: "a" });
    on("on_update_people", (updates: Doc) => void (updates.touched = true));
    on("on_updated_people", (updates: Doc) => void (updates.title = "after the fact"));
    const patched = await json(await api.patch(`/people/${created._id}`, { title: "b" }, { "If-Match": created._etag }));
    const read = await api.get(`/people/${created._id}`);
    expect(await json(read)).toMatchObject({ title: "b", touched: true, _etag: patched._etag });
    expect(read.headers.get("etag")).toBe(`"${patched._etag}"`);
  });

  // A PATCH reads the stored version itself where nothing of the application's is handed the
  // original (src/methods/patch.ts, onlyReadHere); each of these fails with its condition left out.
  const mutateOriginal = (original: Doc) => {
    (original.place as Doc).city = "Oslo";
    (original.tags as string[]).push("y");
  };
  const storedAsCreated = async (patchApi: TestApi, mutate: () => void) => {
    const created = await json(await patchApi.post("/people", { title: "a", place: { city: "Rome" }, tags: ["x"] }));
    mutate();
    const patched = await patchApi.patch(`/people/${created._id}`, { title: "b" }, { "If-Match": created._etag });
    expect(patched.status).toBe(200);
    const raw = await patchApi.handler.app.data.findOne(null, patchApi.handler.app.config.DOMAIN.people!, { title: "b" });
    expect(raw).toMatchObject({ place: { city: "Rome" }, tags: ["x"] });
  };

  it("may change the original they are handed; the store keeps what it holds", async () => {
    await storedAsCreated(api, () => on("on_update_people", (_updates: Doc, original: Doc) => mutateOriginal(original)));
  });

  it("as on_updated, a feature's beforeUpdate or afterUpdate, a custom rule and a field rule's field_access may", async () => {
    await storedAsCreated(api, () => on("on_updated", (_resource: string, _updates: Doc, original: Doc) => mutateOriginal(original)));
    const others = [
      testApi(settings, { features: [{ beforeUpdate: (_ctx: unknown, _resource: unknown, _updates: Doc, original: Doc) => mutateOriginal(original) }] }),
      testApi(settings, { features: [{ afterUpdate: (_ctx: unknown, _resource: unknown, _updates: Doc, _updated: Doc, original: Doc) => mutateOriginal(original) }] }),
      testApi(
        { DOMAIN: { people: { ...settings.DOMAIN!.people!, schema: { ...settings.DOMAIN!.people!.schema!, title: { type: "string", touches: true } as FieldSchema } } } },
        { validation: { rules: { touches: (_rule: unknown, _field: unknown, _value: unknown, ctx: { original?: Doc }) => ctx.original && mutateOriginal(ctx.original) } } },
      ),
      testApi({
        DOMAIN: {
          people: {
            ...settings.DOMAIN!.people!,
            schema: {
              ...settings.DOMAIN!.people!.schema!,
              // Asked with the stored document on a PATCH's write check.
              title: { type: "string", field_access: ({ method, document }: { method: string; document?: Doc }) => (method === "PATCH" && document?.place && mutateOriginal(document), true) } as FieldSchema,
            },
          },
        },
      }),
    ];
    try {
      for (const other of others) await storedAsCreated(other, () => undefined);
    } finally {
      for (const other of others) await other.close();
    }
  });
});
