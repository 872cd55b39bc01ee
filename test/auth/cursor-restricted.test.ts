// Cursor paging and counts under user-restricted access (auth_field): every page is read with
// the caller's own scope, so a cursor carries a position and never a filter — another user's
// cursor shows a caller only their own documents — and no count, estimated or not, reports
// more than the caller's documents (docs/contracts.md §5).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";
import { ALICE, BOB, TokenUsers as Users } from "../support/token-users.ts";

const alice = ALICE;
const bob = BOB;

const settings: Settings = {
  AUTH: Users,
  AUTH_FIELD: "owner",
  RESOURCE_METHODS: ["GET", "POST"],
  PAGINATION_CURSOR: true,
  PAGINATION_COUNT: "estimated",
  DOMAIN: { notes: { schema: { title: { type: "string" }, rank: { type: "integer" }, owner: { type: "string" } } } },
};

describe("cursor paging with auth_field", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = testApi(settings);
    const notes = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => ({ title: `${prefix}${String(i).padStart(2, "0")}`, rank: i % 4 }));
    expect((await api.post("/notes", notes("a", 9), alice)).status).toBe(201);
    expect((await api.post("/notes", notes("b", 14), bob)).status).toBe(201);
  });
  afterAll(() => api.close());

  const titles = (body: { _items: Array<{ title: string }> }) => body._items.map((item) => item.title);

  it("shows each caller only their own documents on every page", async () => {
    const seen: string[] = [];
    let next: string | undefined = "notes?sort=rank,title&max_results=2";
    while (next) {
      const body = await json(await api.get(`/${next}`, alice));
      seen.push(...titles(body));
      expect(body._meta).toMatchObject({ total: 9, count: "exact" });
      next = body._links.next?.href;
    }
    expect(seen).toHaveLength(9);
    expect(seen.every((title) => title.startsWith("a"))).toBe(true);
  });

  it("reads another user's cursor as a position only: the caller's own documents after it", async () => {
    const first = await json(await api.get("/notes?sort=title&max_results=3", alice));
    const borrowed = await json(await api.get(`/${first._links.next.href}`, bob));
    expect(titles(borrowed).every((title) => title.startsWith("b"))).toBe(true);
    expect(borrowed._meta.total).toBe(14);
    expect((await api.get(`/${first._links.next.href}`)).status).toBe(401);
  });

  it("never estimates the whole collection for a restricted caller", async () => {
    const response = await api.get("/notes?count=estimated", bob);
    expect((await json(response))._meta).toMatchObject({ total: 14, count: "exact" });
    expect(response.headers.get("x-total-count")).toBe("14");
  });
});
