// Writes by filter and update operators under user-restricted access (auth_field): a user's
// PATCH or DELETE by filter, even for every document, changes that user's documents only, and no
// operator can hand a document to another user.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";
import { ALICE as alice, BOB as bob, TokenUsers as Users } from "../support/token-users.ts";


const settings: Settings = {
  AUTH: Users,
  AUTH_FIELD: "owner",
  UPDATE_OPERATORS: ["$inc", "$set"],
  PATCH_BY_FILTER: true,
  DELETE_BY_FILTER: true,
  RESOURCE_METHODS: ["GET", "POST", "PATCH", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  ENFORCE_IF_MATCH: false,
  DOMAIN: { notes: { schema: { title: { type: "string" }, read: { type: "boolean" }, views: { type: "integer" }, owner: { type: "string" } } } },
};

let api: TestApi;
beforeEach(async () => {
  api = testApi(settings);
  await api.post("/notes", [{ title: "a1", views: 0 }, { title: "a2", views: 0 }], alice);
  await api.post("/notes", [{ title: "b1", views: 0 }], bob);
});
afterEach(() => api.close());

const mine = async (headers: Record<string, string>) => (await json(await api.get("/notes?sort=title", headers)))._items;

describe("writes by filter under auth_field", () => {
  it("a PATCH of every document changes the caller's only", async () => {
    const body = await json(await api.patch("/notes", { read: true, $inc: { views: 1 } }, { ...alice, Prefer: "all" }));
    expect(body._meta).toEqual({ matched: 2, updated: 2 });
    expect((await mine(alice)).map((n: Record<string, unknown>) => [n.title, n.read, n.views])).toEqual([
      ["a1", true, 1],
      ["a2", true, 1],
    ]);
    expect((await mine(bob)).map((n: Record<string, unknown>) => [n.title, n.read, n.views])).toEqual([["b1", undefined, 0]]);
  });

  it("a where naming another user's documents matches nothing of theirs", async () => {
    const where = encodeURIComponent(JSON.stringify({ $or: [{ owner: "bob" }, { title: "b1" }] }));
    expect((await json(await api.patch(`/notes?where=${where}`, { read: true }, alice)))._meta).toEqual({ matched: 0, updated: 0 });
    expect((await json(await api.delete(`/notes?where=${where}`, alice)))._meta).toEqual({ matched: 0, deleted: 0 });
    expect(await mine(bob)).toHaveLength(1);
  });

  it("a DELETE of every document deletes the caller's only", async () => {
    expect((await json(await api.delete("/notes", { ...bob, Prefer: "all" })))._meta).toEqual({ matched: 1, deleted: 1 });
    expect(await mine(bob)).toHaveLength(0);
    expect(await mine(alice)).toHaveLength(2);
  });

  it("no operator or plain field hands a document to another user", async () => {
    const [note] = await mine(alice);
    const refused = await api.patch(`/notes/${note._id}`, { $set: { owner: "bob" } }, alice);
    expect(refused.status).toBe(422);
    expect(await json(refused)).toEqual({ _status: "ERR", _issues: { $set: { owner: "field is read-only" } } });
    expect((await api.patch(`/notes/${note._id}`, { owner: "bob", $inc: { views: 1 } }, alice)).status).toBe(200);
    expect((await api.patch("/notes", { owner: "bob" }, { ...alice, Prefer: "all" })).status).toBe(200);
    expect((await mine(alice)).map((n: Record<string, unknown>) => n.owner)).toEqual(["alice", "alice"]);
    expect((await api.patch(`/notes/${note._id}`, { $inc: { views: 1 } }, bob)).status).toBe(404);
  });
});
