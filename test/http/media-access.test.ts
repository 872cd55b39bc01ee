// The media endpoint serves a file only to a caller who may read the document holding it: a
// file id can be guessed in part (an ObjectId counts up), and another user's file (auth_field)
// or a file of a resource the caller may not read was served to anyone who authenticated.
import { afterAll, describe, expect, it } from "vitest";
import { json, moduleSettings, testApi } from "../support/api.ts";
import settings from "./media-access/settings.ts";

const api = testApi(moduleSettings(settings, new URL("./media-access/settings.ts", import.meta.url)));
afterAll(() => api.close());
const as = (user: string) => ({ Authorization: `Bearer ${user}` });

async function upload(path: string, user: string, text: string): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([text], { type: "text/plain" }), "f.txt");
  const created = await api.fetch(path, { method: "POST", body: form, headers: as(user) });
  expect(created.status, await created.clone().text()).toBe(201);
  const item = await json(await api.get(`${path}/${(await json(created))._id}`, as(user)));
  return item.file as string;
}

describe("the media endpoint", () => {
  it("serves a user's file to that user alone, a restricted resource's to those who may read it", async () => {
    const bobs = await upload("/notes", "bob", "BOB SECRET");
    const vaults = await upload("/vault", "admin", "VAULT");
    const shared = await upload("/shared", "alice", "SHARED");
    const read = async (url: string, user: string) => {
      const response = await api.get(url, as(user));
      return { status: response.status, text: await response.text() };
    };
    expect(await read(bobs, "bob")).toEqual({ status: 200, text: "BOB SECRET" });
    expect((await read(bobs, "alice")).status).toBe(404);
    expect(await read(vaults, "admin")).toEqual({ status: 200, text: "VAULT" });
    expect((await read(vaults, "alice")).status).toBe(404);
    expect(await read(shared, "bob")).toEqual({ status: 200, text: "SHARED" });
    expect((await api.get(shared)).status).toBe(401);
  });

  it("holds for a versioned resource's files, current and replaced: its versions are its documents'", async () => {
    const first = await upload("/drafts", "bob", "DRAFT 1");
    const draft = (await json(await api.get("/drafts", as("bob"))))._items[0];
    const form = new FormData();
    form.append("file", new Blob(["DRAFT 2"], { type: "text/plain" }), "f.txt");
    expect((await api.fetch(`/drafts/${draft._id}`, { method: "PATCH", body: form, headers: { ...as("bob"), "If-Match": draft._etag } })).status).toBe(200);
    const second = (await json(await api.get(`/drafts/${draft._id}`, as("bob")))).file as string;
    expect(second).not.toBe(first);
    for (const url of [first, second]) {
      expect((await api.get(url, as("bob"))).status, url).toBe(200);
      expect((await api.get(url, as("alice"))).status, url).toBe(404);
    }
  });
});
