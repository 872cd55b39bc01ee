// Cursors over a field some callers may not read (docs/contracts.md §4, §5): a caller who may
// not read it cannot sort by it, cursor or not (nor can a default_sort name it: start-up refuses
// that); the cursors of a caller who may, which carry its values, show none of them to whoever
// holds the URL, and another caller cannot use them (start-up requires the secret that seals
// them, test/settings/paging.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BasicAuth } from "../../src/auth/auth.ts";
import type { Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const accounts = { hana: { password: "hana-pw", roles: ["hr"] }, sam: { password: "sam-pw", roles: ["staff"] } };
const as = (account: keyof typeof accounts) => ({ Authorization: `Basic ${btoa(`${account}:${accounts[account].password}`)}` });
const SALARIES = [970011, 970042, 970023, 970034, 970005];

const settings: Settings = {
  AUTH: new BasicAuth({ users: accounts }),
  RESOURCE_METHODS: ["GET", "POST"],
  PAGINATION_CURSOR: true,
  PAGINATION_CURSOR_SECRET: "a secret that seals salaries",
  DOMAIN: {
    staff: { schema: { name: { type: "string" }, salary: { type: "integer", allowed_read_roles: ["hr"] } } },
  },
};

/** The bytes of a cursor (base64url), as text. */
function opened(href: string): string {
  const token = new URLSearchParams(href.split("?")[1]).get("cursor")!;
  return atob(token.replaceAll("-", "+").replaceAll("_", "/") + "=".repeat((4 - (token.length % 4)) % 4));
}

describe("cursors over a field with read rules", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = testApi(settings);
    const response = await api.post("/staff", SALARIES.map((salary, i) => ({ name: `s${i}`, salary })), as("hana"));
    expect(response.status, await response.clone().text()).toBe(201);
  });
  afterAll(() => api.close());

  it("seals the values of a caller's sort in its cursors, which pages the walk in that order", async () => {
    const names: string[] = [];
    let next: string | undefined = "staff?sort=-salary&max_results=2";
    while (next) {
      const body = await json(await api.get(`/${next}`, as("hana")));
      names.push(...body._items.map((item: { name: string }) => item.name));
      next = body._links.next?.href;
      if (next) for (const salary of SALARIES) expect(opened(next)).not.toContain(String(salary));
    }
    expect(names).toEqual(["s1", "s3", "s2", "s0", "s4"]);
    // Another caller walks the same collection without ever seeing a salary.
    const text = await (await api.get("/staff?max_results=10", as("sam"))).text();
    for (const salary of SALARIES) expect(text).not.toContain(String(salary));
  });

  it("refuses its sort to a caller who may not read it, and a cursor bent towards it", async () => {
    expect((await api.get("/staff?sort=salary", as("sam"))).status).toBe(400);
    const hr = await json(await api.get("/staff?sort=salary&max_results=2", as("hana")));
    const next: string = hr._links.next.href;
    expect((await api.get(`/${next}`, as("hana"))).status).toBe(200);
    expect((await api.get(`/${next}`, as("sam"))).status).toBe(400);
    expect((await api.get(`/staff?${next.split("?")[1]!.replace("sort=salary&", "")}`, as("sam"))).status).toBe(400);
  });
});
