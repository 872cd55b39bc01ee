// examples/multi-tenant: loaded as the CLI loads it, two users each see only their own notes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { loadSettingsFile } from "../../adapters/settings-file.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const alice = { Authorization: "Bearer alice-token" };
const bob = { Authorization: "Bearer bob-token" };

let api: TestApi;
beforeAll(async () => {
  api = testApi(await loadSettingsFile(fileURLToPath(new URL("../../examples/multi-tenant/settings.ts", import.meta.url))));
});
afterAll(() => api.close());

const titles = async (headers: Record<string, string>) => (await json(await api.get("/notes", headers)))._items.map((n: { title: string }) => n.title).sort();

describe("the multi-tenant example", () => {
  it("keeps each user's notes to that user", async () => {
    const first = await json(await api.post("/notes", { title: "alice 1" }, alice));
    await api.post("/notes", [{ title: "alice 2" }], alice);
    await api.post("/notes", { title: "bob 1" }, bob);

    expect(await titles(alice)).toEqual(["alice 1", "alice 2"]);
    expect(await titles(bob)).toEqual(["bob 1"]);
    expect((await json(await api.get(`/notes/${first._id}`, alice))).owner).toBe("alice");
    expect((await api.get(`/notes/${first._id}`, bob)).status).toBe(404);
    expect((await api.patch(`/notes/${first._id}`, { title: "bob was here" }, { ...bob, "If-Match": first._etag })).status).toBe(404);

    expect((await api.delete("/notes", bob)).status).toBe(204);
    expect(await titles(bob)).toEqual([]);
    expect(await titles(alice)).toEqual(["alice 1", "alice 2"]);
  });

  it("turns away requests without a known token", async () => {
    expect((await api.get("/notes")).status).toBe(401);
    expect((await api.get("/notes", { Authorization: "Bearer carol-token" })).status).toBe(401);
  });
});
