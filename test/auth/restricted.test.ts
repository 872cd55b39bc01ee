// User-restricted resource access (AUTH_FIELD / auth_field): every read, edit, delete and
// create acts on the caller's documents only, whichever way the request reaches them.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RequestContext } from "../../src/context.ts";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import type { Doc, Driver, Target } from "../../src/drivers/types.ts";
import type { ResourceSettings, Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";
import { ALICE, BOB, TokenUsers as Users } from "../support/token-users.ts";

const alice = ALICE;
const bob = BOB;
const writable = { resource_methods: ["GET", "POST", "DELETE"], item_methods: ["GET", "PATCH", "PUT", "DELETE"] } satisfies ResourceSettings;

const settings: Settings = {
  AUTH: Users,
  AUTH_FIELD: "owner",
  DOMAIN: {
    notes: { ...writable, schema: { title: { type: "string" }, owner: { type: "string" } } },
    secrets: { ...writable, schema: { title: { type: "string" } } },
    comments: {
      ...writable,
      auth_field: null,
      schema: { text: { type: "string" }, note: { type: "objectid", data_relation: { resource: "notes", embeddable: true } } },
    },
    boardnotes: {
      ...writable,
      url: 'boards/<regex("[a-z]+"):board>/notes',
      schema: { board: { type: "string" }, title: { type: "string" } },
    },
    // The owner in the URL: each user's notes under their own name.
    usernotes: { ...writable, url: 'users/<regex("[a-z]+"):owner>/notes', datasource: { source: "notes" }, schema: { title: { type: "string" }, owner: { type: "string" } } },
    shared: { ...writable, public_methods: ["GET"], schema: { title: { type: "string" } } },
    // Soft delete leaves uniqueness to the validator's query (no unique index).
    handles: { ...writable, soft_delete: true, schema: { handle: { type: "string", unique: true }, nick: { type: "string", unique_to_user: true } } },
  },
};

let api: TestApi;
beforeEach(() => {
  api = testApi(settings);
});
afterEach(() => api.close());

const titles = async (response: Response) => (await json(response))._items.map((d: { title: string }) => d.title).sort();

async function create(path: string, body: Doc, headers: Record<string, string>): Promise<{ _id: string; _etag: string }> {
  const response = await api.post(path, body, headers);
  expect(response.status).toBe(201);
  return json(response);
}

describe("reads", () => {
  it("list only the caller's documents, and count only those", async () => {
    await create("/notes", { title: "a1" }, alice);
    await create("/notes", { title: "a2" }, alice);
    await create("/notes", { title: "b1" }, bob);
    const mine = await json(await api.get("/notes", alice));
    expect(mine._items.map((d: Doc) => d.title).sort()).toEqual(["a1", "a2"]);
    expect(mine._items.every((d: Doc) => d.owner === "alice")).toBe(true);
    expect(mine._meta.total).toBe(2);
    expect(await titles(await api.get("/notes", bob))).toEqual(["b1"]);
  });

  it("answer 404 for another user's item", async () => {
    const note = await create("/notes", { title: "a1" }, alice);
    expect((await api.get(`/notes/${note._id}`, bob)).status).toBe(404);
    expect((await api.get(`/notes/${note._id}`, alice)).status).toBe(200);
  });

  it("refuse a where asking for another user's documents (Eve's 401), and keep own filters working", async () => {
    await create("/notes", { title: "a1" }, alice);
    await create("/notes", { title: "b1" }, bob);
    const asked = await api.get(`/notes?where=${encodeURIComponent('{"owner": "bob"}')}`, alice);
    expect(asked.status).toBe(401);
    expect((await json(asked))._error.message).toBe("Incompatible User-Restricted Resource request.");
    expect(await titles(await api.get(`/notes?where=${encodeURIComponent('{"owner": "alice"}')}`, alice))).toEqual(["a1"]);
    expect(await titles(await api.get(`/notes?where=${encodeURIComponent('{"$or": [{"owner": "bob"}, {"title": "b1"}]}')}`, alice))).toEqual([]);
    // Any other condition on the field is incompatible too, operators included (Eve's rule).
    for (const where of ['{"owner": {"$exists": true}}', '{"owner": {"$in": ["alice", "bob"]}}', '{"$and": [{"title": "a1"}, {"owner": {"$ne": "bob"}}]}']) {
      expect((await api.get(`/notes?where=${encodeURIComponent(where)}`, alice)).status).toBe(401);
    }
  });

  it("hold inside sub-resources", async () => {
    await create("/boards/x/notes", { title: "a1" }, alice);
    await create("/boards/x/notes", { title: "b1" }, bob);
    await create("/boards/y/notes", { title: "a2" }, alice);
    expect(await titles(await api.get("/boards/x/notes", alice))).toEqual(["a1"]);
    expect(await titles(await api.get("/boards/x/notes", bob))).toEqual(["b1"]);
  });

  it("hold where the URL names the owner: another user's URL is Eve's 401, for a POST as for a GET", async () => {
    const own = await api.post("/users/alice/notes", { title: "mine" }, alice);
    expect(own.status).toBe(201);
    expect((await json(own))._links.self.href).toMatch(/^users\/alice\/notes\//);
    for (const response of [await api.get("/users/alice/notes", bob), await api.post("/users/alice/notes", { title: "planted" }, bob)]) {
      expect(response.status).toBe(401);
      expect((await json(response))._error.message).toBe("Incompatible User-Restricted Resource request.");
    }
    expect(await titles(await api.get("/notes", alice))).toEqual(["mine"]);
    expect(await titles(await api.get("/notes", bob))).toEqual([]);
  });

  it("hold for embedded documents", async () => {
    const note = await create("/notes", { title: "a1" }, alice);
    await create("/comments", { text: "on a1", note: note._id }, alice);
    const embedded = `/comments?embedded=${encodeURIComponent('{"note": 1}')}`;
    const forAlice = await json(await api.get(embedded, alice));
    expect(forAlice._items[0].note).toMatchObject({ title: "a1", owner: "alice" });
    const forBob = await json(await api.get(embedded, bob));
    expect(forBob._items).toHaveLength(1);
    expect(forBob._items[0].note).toBeNull();
  });

  it("do not apply to public methods, as in Eve: everyone reads everything", async () => {
    await create("/shared", { title: "a1" }, alice);
    await create("/shared", { title: "b1" }, bob);
    expect(await titles(await api.get("/shared"))).toEqual(["a1", "b1"]);
  });
});

describe("writes", () => {
  it("stamp the owner on create, overwriting what the client sent", async () => {
    const note = await create("/notes", { title: "forged", owner: "bob" }, alice);
    expect((await json(await api.get(`/notes/${note._id}`, alice))).owner).toBe("alice");
    expect(await titles(await api.get("/notes", bob))).toEqual([]);
  });

  it("refuse an owner field the schema does not declare", async () => {
    const response = await api.post("/secrets", { title: "x", owner: "bob" }, alice);
    expect(response.status).toBe(422);
    expect((await json(response))._issues).toEqual({ owner: "unknown field" });
  });

  it("cannot hand a document to another user with PATCH or PUT", async () => {
    const note = await create("/notes", { title: "a1" }, alice);
    const patched = await api.patch(`/notes/${note._id}`, { owner: "bob" }, { ...alice, "If-Match": note._etag });
    expect(patched.status).toBe(200);
    const put = await api.put(`/notes/${note._id}`, { title: "a1'", owner: "bob" }, { ...alice, "If-Match": (await json(patched))._etag });
    expect(put.status).toBe(200);
    expect((await json(await api.get(`/notes/${note._id}`, alice))).owner).toBe("alice");
    expect(await titles(await api.get("/notes", bob))).toEqual([]);
  });

  it("cannot edit, replace or delete another user's document", async () => {
    const note = await create("/notes", { title: "a1" }, alice);
    const headers = { ...bob, "If-Match": note._etag };
    expect((await api.patch(`/notes/${note._id}`, { title: "mine now" }, headers)).status).toBe(404);
    expect((await api.delete(`/notes/${note._id}`, headers)).status).toBe(404);
    // Bob sees no such item, and his If-Match names one: the precondition is false (412), never an
    // upsert — nor a 409 that would tell him the id is taken. Nothing is written.
    expect((await api.put(`/notes/${note._id}`, { title: "mine now" }, headers)).status).toBe(412);
    const { "If-Match": _, ...unconditional } = headers;
    // Without If-Match (where allowed) the upsert is tried, and the taken id is a conflict (409, as Eve).
    expect((await api.put(`/notes/${note._id}`, { title: "mine now" }, unconditional)).status).toBe(409);
    const stored = await json(await api.get(`/notes/${note._id}`, alice));
    expect(stored).toMatchObject({ title: "a1", owner: "alice", _etag: note._etag });
  });

  it("keep unique values unique across all users, and unique_to_user ones per user", async () => {
    await create("/handles", { handle: "ace", nick: "a" }, alice);
    const taken = await api.post("/handles", { handle: "ace" }, bob);
    expect(taken.status).toBe(422);
    expect((await json(taken))._issues).toEqual({ handle: "value 'ace' is not unique" });
    expect((await api.post("/handles", { handle: "bee", nick: "a" }, bob)).status).toBe(201);
    expect((await api.post("/handles", { handle: "cee", nick: "a" }, alice)).status).toBe(422);
  });

  it("delete only the caller's documents on a collection DELETE", async () => {
    await create("/notes", { title: "a1" }, alice);
    await create("/notes", { title: "b1" }, bob);
    expect((await api.delete("/notes", alice)).status).toBe(204);
    expect(await titles(await api.get("/notes", alice))).toEqual([]);
    expect(await titles(await api.get("/notes", bob))).toEqual(["b1"]);
  });
});

describe("aggregation", () => {
  const request = (headers: Record<string, string>) => new Request("http://everest.test/notes", { headers });

  it("sees only the caller's documents", async () => {
    await create("/notes", { title: "a1" }, alice);
    await create("/notes", { title: "a2" }, alice);
    await create("/notes", { title: "b1" }, bob);
    const app = api.handler.app;
    const ctx = new RequestContext(request(alice), app.config.MAX_BODY_SIZE);
    ctx.endpoint = { kind: "collection", resource: app.config.DOMAIN.notes! };
    ctx.setRequestAuthValue("alice");
    const groups = await app.data.aggregate(ctx, app.config.DOMAIN.notes!, [{ $group: { _id: "$owner", n: { $sum: 1 } } }]);
    expect(groups).toEqual([{ _id: "alice", n: 2 }]);
  });

  it("puts the condition into a leading $geoNear, which must stay first", async () => {
    const pipelines: Doc[][] = [];
    const memory = await MemoryDriver.open({ databaseName: "t" });
    const recording: Driver = new Proxy(memory, {
      get(target, key, receiver) {
        if (key === "aggregate") return async (t: Target, pipeline: Doc[]) => (pipelines.push(pipeline), []);
        const value = Reflect.get(target, key, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const geo = testApi(settings, { driver: recording });
    const app = geo.handler.app;
    const ctx = new RequestContext(request(alice), app.config.MAX_BODY_SIZE);
    ctx.endpoint = { kind: "collection", resource: app.config.DOMAIN.notes! };
    ctx.setRequestAuthValue("alice");
    const near = { near: { type: "Point", coordinates: [0, 0] }, distanceField: "d", query: { title: "a1" } };
    await app.data.aggregate(ctx, app.config.DOMAIN.notes!, [{ $geoNear: near }, { $limit: 1 }]);
    expect(pipelines).toEqual([[{ $geoNear: { ...near, query: { $and: [{ title: "a1" }, { owner: "alice" }] } } }, { $limit: 1 }]]);
    await geo.close();
  });
});
