// Where field rules get the caller's roles (docs/auth.md, "Field rules"): the built-in auth classes
// from the account that authenticated, a custom check from ctx.setRequestRoles, server code from
// the request it acts for (app.internal's `on:`) or, acting on its own, with every right.
import { afterEach, describe, expect, it } from "vitest";
import { BasicAuth, HMACAuth, TokenAuth, hmacSha256Hex } from "../../src/auth/auth.ts";
import type { RequestContext } from "../../src/context.ts";
import { RequestContext as Context } from "../../src/context.ts";
import type { ResourceSettings, Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const people = {
  resource_methods: ["GET", "POST"],
  item_methods: ["GET", "PATCH"],
  schema: { name: { type: "string" }, salary: { type: "integer", allowed_read_roles: ["hr"], allowed_write_roles: ["hr"] } },
} satisfies ResourceSettings;

const basic = (user: string, password: string) => ({ Authorization: "Basic " + btoa(`${user}:${password}`) });

let api: TestApi;
afterEach(() => api?.close());

/** The API, with one document stored by server code (which may write every field). */
async function start(settings: Settings): Promise<string> {
  api = testApi({ ENFORCE_IF_MATCH: false, ...settings });
  const created = await api.handler.app.internal.post("people", { name: "Ann", salary: 100 });
  expect(created.status).toBe(201);
  return String((created.body as { _id: unknown })._id);
}

const salaryOf = async (response: Response) => (await json(response)).salary as number | undefined;

describe("the roles field rules are checked against", () => {
  it("BasicAuth: the roles of the account that authenticated", async () => {
    const id = await start({ AUTH: new BasicAuth({ users: { hr: { password: "a", roles: ["hr"] }, dev: { password: "b", roles: ["dev"] }, none: { password: "c" } } }), DOMAIN: { people } });
    expect(await salaryOf(await api.get(`/people/${id}`, basic("hr", "a")))).toBe(100);
    expect(await salaryOf(await api.get(`/people/${id}`, basic("dev", "b")))).toBeUndefined();
    expect(await salaryOf(await api.get(`/people/${id}`, basic("none", "c")))).toBeUndefined();
    expect((await api.patch(`/people/${id}`, { salary: 1 }, basic("dev", "b"))).status).toBe(403);
    expect((await api.patch(`/people/${id}`, { salary: 1 }, basic("hr", "a"))).status).toBe(200);
  });

  it("TokenAuth and HMACAuth: the roles of the token or the user", async () => {
    const id = await start({ AUTH: new TokenAuth({ tokens: { "t-hr": { roles: ["hr"] }, "t-dev": { roles: ["dev"] } } }), DOMAIN: { people } });
    expect(await salaryOf(await api.get(`/people/${id}`, { Authorization: "Bearer t-hr" }))).toBe(100);
    expect(await salaryOf(await api.get(`/people/${id}`, { Authorization: "Bearer t-dev" }))).toBeUndefined();
    await api.close();

    const hmacId = await start({ AUTH: new HMACAuth({ secrets: { hr: { secret: "k1", roles: ["hr"] }, dev: { secret: "k2" } } }), DOMAIN: { people } });
    const signed = async (user: string, secret: string) => ({ Authorization: `${user}:${await hmacSha256Hex(secret, "")}` });
    expect(await salaryOf(await api.get(`/people/${hmacId}`, await signed("hr", "k1")))).toBe(100);
    expect(await salaryOf(await api.get(`/people/${hmacId}`, await signed("dev", "k2")))).toBeUndefined();
  });

  it("a custom check: the roles it gives with ctx.setRequestRoles", async () => {
    class Directory extends BasicAuth {
      override checkAuth(username: string, password: string, _roles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean {
        ctx.setRequestRoles(username === "hr" ? ["hr"] : []);
        return password === "pw";
      }
    }
    const id = await start({ AUTH: Directory, DOMAIN: { people } });
    expect(await salaryOf(await api.get(`/people/${id}`, basic("hr", "pw")))).toBe(100);
    expect(await salaryOf(await api.get(`/people/${id}`, basic("ann", "pw")))).toBeUndefined();
  });

  it("a public method checks no credentials: its callers have no roles", async () => {
    const id = await start({ AUTH: new BasicAuth({ users: { hr: { password: "a", roles: ["hr"] } } }), PUBLIC_ITEM_METHODS: ["GET"], DOMAIN: { people } });
    expect(await salaryOf(await api.get(`/people/${id}`, basic("hr", "a")))).toBeUndefined();
    expect(await salaryOf(await api.get(`/people/${id}`))).toBeUndefined();
  });

  it("server code: every right on its own, the request's roles when it acts for one", async () => {
    const id = await start({ DOMAIN: { people } });
    const internal = api.handler.app.internal;
    expect((await internal.getItem("people", { _id: id })).body).toMatchObject({ salary: 100 });

    const request = new Context(new Request("http://everest.test/people"), 1_000);
    request.setRequestRoles(["dev"]);
    expect((await internal.getItem("people", { _id: id }, {}, { on: request })).body).not.toHaveProperty("salary");
    expect((await internal.get("people", {}, {}, { on: request })).body).toMatchObject({ _items: [{ name: "Ann" }] });
    expect(JSON.stringify((await internal.get("people", {}, {}, { on: request })).body)).not.toContain("salary");
    expect((await internal.post("people", { name: "Bo", salary: 1 }, { on: request })).status).toBe(403);
    expect((await internal.patch("people", { _id: id }, { salary: 5 }, { on: request })).status).toBe(403);
    expect((await internal.get("people", {}, { where: { salary: 100 } }, { on: request })).status).toBe(400);

    request.setRequestRoles(["hr"]);
    expect((await internal.getItem("people", { _id: id }, {}, { on: request })).body).toMatchObject({ salary: 100 });
  });
});
