// Authentication over HTTP: the three wire forms, the overridable checks, global and
// per-resource auth, public methods, roles, the 401 Eve sends, CORS preflight and the listings.
import { afterEach, describe, expect, it } from "vitest";
import { BasicAuth, HMACAuth, TokenAuth, hmacSha256Hex } from "../../src/auth/auth.ts";
import { timingSafeEqual } from "../../src/util/compare.ts";
import { requestBodyText } from "../../src/index.ts";
import type { RequestContext } from "../../src/context.ts";
import { abort } from "../../src/errors.ts";
import type { ResourceSettings, Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const basic = (user: string, password: string) => ({ Authorization: "Basic " + btoa(`${user}:${password}`) });

const notes = { schema: { title: { type: "string" } }, resource_methods: ["GET", "POST", "DELETE"], item_methods: ["GET", "PATCH", "PUT", "DELETE"] } satisfies ResourceSettings;

let api: TestApi;
afterEach(() => api?.close());

function start(settings: Settings): TestApi {
  api = testApi(settings);
  return api;
}

async function expect401(response: Response, challenge: string | null = 'Basic realm="everest"'): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get("www-authenticate")).toBe(challenge);
  expect(await json(response)).toEqual({ _status: "ERR", _error: { code: 401, message: "Please provide proper credentials" } });
}

describe("BasicAuth", () => {
  const users = { alice: { password: "wonderland" }, bob: { password: "builder", roles: ["admin"] } };

  it("answers 401 with Eve's challenge and message without credentials or with wrong ones", async () => {
    start({ AUTH: new BasicAuth({ users }), DOMAIN: { notes } });
    await expect401(await api.get("/notes"));
    await expect401(await api.get("/notes", basic("alice", "wonderlanD")));
    await expect401(await api.get("/notes", basic("alice", "wonderland!")));
    await expect401(await api.get("/notes", basic("alice", "")));
    await expect401(await api.get("/notes", basic("mallory", "wonderland")));
    await expect401(await api.get("/notes", { Authorization: "Basic !!!notbase64" }));
    await expect401(await api.get("/notes", { Authorization: "Bearer abc" }));
  });

  it("lets a valid user through, on every method", async () => {
    start({ AUTH: new BasicAuth({ users }), DOMAIN: { notes } });
    expect((await api.get("/notes", basic("alice", "wonderland"))).status).toBe(200);
    const created = await api.post("/notes", { title: "a" }, basic("alice", "wonderland"));
    expect(created.status).toBe(201);
    const { _id, _etag } = await json(created);
    expect((await api.patch(`/notes/${_id}`, { title: "b" }, { ...basic("alice", "wonderland"), "If-Match": _etag })).status).toBe(200);
    expect((await api.post("/notes", { title: "a" })).status).toBe(401);
  });

  it("passes Eve's arguments plus the request context to an overridden, async checkAuth", async () => {
    const calls: unknown[][] = [];
    class Recording extends BasicAuth {
      override async checkAuth(username: string, password: string, allowedRoles: string[], resource: string | null, method: string, ctx: RequestContext) {
        await Promise.resolve();
        calls.push([username, password, allowedRoles, resource, method, ctx.request.url]);
        return username === "carol" && password === "pw:with:colons";
      }
    }
    start({ AUTH: Recording, ALLOWED_ROLES: ["staff"], ALLOWED_READ_ROLES: ["reader"], DOMAIN: { notes } });
    const response = await api.get("/notes?where={}", basic("carol", "pw:with:colons"));
    expect(response.status).toBe(200);
    expect(calls).toEqual([["carol", "pw:with:colons", ["staff", "reader"], "notes", "GET", "http://everest.test/notes?where={}"]]);
  });

  it("lets a check abort with its own status", async () => {
    class Forbidding extends BasicAuth {
      override checkAuth(): boolean {
        abort(403, "not during maintenance");
      }
    }
    start({ AUTH: new Forbidding(), DOMAIN: { notes } });
    const response = await api.get("/notes", basic("alice", "x"));
    expect(response.status).toBe(403);
    expect((await json(response))._error).toEqual({ code: 403, message: "not during maintenance" });
  });

  it("may read the body with requestBodyText, and the method still gets it", async () => {
    const bodies: string[] = [];
    class Signed extends BasicAuth {
      override async checkAuth(_u: string, password: string, _roles: string[], _r: string | null, method: string, ctx: RequestContext) {
        if (method === "POST") bodies.push(await requestBodyText(ctx));
        return password === "pw";
      }
    }
    start({ AUTH: Signed, DOMAIN: { notes } });
    const response = await api.post("/notes", { title: "read twice" }, basic("u", "pw"));
    expect(response.status).toBe(201);
    expect(bodies).toEqual(['{"title":"read twice"}']);
    expect((await json(await api.get("/notes", basic("u", "pw"))))._items[0].title).toBe("read twice");
  });
});

describe("TokenAuth", () => {
  const tokens = { "s3cr3t-token": {}, "admin-token": { roles: ["admin"] } };

  it("reads the token as a Basic username, after Token or Bearer, or as the bare header", async () => {
    start({ AUTH: new TokenAuth({ tokens }), DOMAIN: { notes } });
    for (const header of [basic("s3cr3t-token", ""), { Authorization: "Bearer s3cr3t-token" }, { Authorization: "token s3cr3t-token" }, { Authorization: "s3cr3t-token" }]) {
      expect((await api.get("/notes", header)).status).toBe(200);
    }
  });

  it("refuses a missing or unknown token with the Basic challenge", async () => {
    start({ AUTH: new TokenAuth({ tokens }), DOMAIN: { notes } });
    await expect401(await api.get("/notes"));
    await expect401(await api.get("/notes", { Authorization: "Bearer s3cr3t-tokeN" }));
    await expect401(await api.get("/notes", { Authorization: "Bearer s3cr3t-token2" }));
    await expect401(await api.get("/notes", { Authorization: "Bearer s3cr3t" }));
    await expect401(await api.get("/notes", { Authorization: "Bearer" }));
    await expect401(await api.get("/notes", basic("", "s3cr3t-token")));
  });

  it("hands the token, roles, resource, method and context to an overridden check", async () => {
    const calls: unknown[][] = [];
    class Recording extends TokenAuth {
      override checkAuth(token: string, allowedRoles: string[], resource: string | null, method: string, ctx: RequestContext) {
        calls.push([token, allowedRoles, resource, method, ctx.method]);
        return token === "t";
      }
    }
    start({ AUTH: new Recording(), DOMAIN: { notes: { ...notes, allowed_item_roles: ["owner"], allowed_item_write_roles: ["editor"] } } });
    const created = await json(await api.post("/notes", { title: "a" }, { Authorization: "Bearer t" }));
    await api.delete(`/notes/${created._id}`, { Authorization: "Bearer t", "If-Match": created._etag });
    expect(calls).toEqual([
      ["t", [], "notes", "POST", "POST"],
      ["t", ["owner", "editor"], "notes", "DELETE", "DELETE"],
    ]);
  });
});

describe("HMACAuth", () => {
  const secrets = { device7: { secret: "k3y" } };
  const body = JSON.stringify({ title: "signed" });

  it("accepts HMAC-SHA256 (hex) of the raw body under the user's secret", async () => {
    start({ AUTH: new HMACAuth({ secrets }), DOMAIN: { notes } });
    const signature = await hmacSha256Hex("k3y", body);
    const response = await api.post("/notes", body, { Authorization: `device7:${signature}` });
    expect(response.status).toBe(201);
    const empty = await hmacSha256Hex("k3y", "");
    expect((await api.get("/notes", { Authorization: `device7:${empty.toUpperCase()}` })).status).toBe(200);
  });

  it("refuses a hash of another body, another key, an unknown user or a malformed header, without a challenge", async () => {
    start({ AUTH: new HMACAuth({ secrets }), DOMAIN: { notes } });
    const other = await hmacSha256Hex("k3y", body + " ");
    await expect401(await api.post("/notes", body, { Authorization: `device7:${other}` }), null);
    await expect401(await api.post("/notes", body, { Authorization: `device7:${await hmacSha256Hex("key", body)}` }), null);
    await expect401(await api.post("/notes", body, { Authorization: `device8:${await hmacSha256Hex("k3y", body)}` }), null);
    await expect401(await api.post("/notes", body, { Authorization: `device7:${await hmacSha256Hex("k3y", body)}:x` }), null);
    await expect401(await api.post("/notes", body), null);
    expect(await json(await api.get("/notes", { Authorization: `device7:${await hmacSha256Hex("k3y", "")}` }))).toMatchObject({ _items: [] });
  });

  it("gives an overridden check the user id, hash, headers and raw body", async () => {
    const calls: unknown[][] = [];
    class Recording extends HMACAuth {
      override async checkAuth(userid: string, hmacHash: string, headers: Headers, data: string, allowedRoles: string[], resource: string | null, method: string) {
        calls.push([userid, hmacHash, headers.get("x-signed"), data, allowedRoles, resource, method]);
        return true;
      }
    }
    start({ AUTH: Recording, DOMAIN: { notes } });
    expect((await api.post("/notes", body, { Authorization: "u1:abc", "X-Signed": "yes" })).status).toBe(201);
    expect(calls).toEqual([["u1", "abc", "yes", body, [], "notes", "POST"]]);
  });
});

describe("where authentication applies", () => {
  const users = { alice: { password: "pw" } };
  const alice = basic("alice", "pw");

  it("protects the home page with the global auth unless GET is public", async () => {
    start({ AUTH: new BasicAuth({ users }), DOMAIN: { notes } });
    await expect401(await api.get("/"));
    expect((await api.get("/", alice)).status).toBe(200);
    start({ AUTH: new BasicAuth({ users }), PUBLIC_METHODS: ["GET"], DOMAIN: { notes: { ...notes, public_methods: [] } } });
    expect((await api.get("/")).status).toBe(200);
  });

  it("gives a resource its own auth class, or none", async () => {
    const tokens = new TokenAuth({ tokens: { t: {} } });
    start({
      AUTH: new BasicAuth({ users }),
      DOMAIN: { notes, tokened: { ...notes, authentication: tokens }, open: { ...notes, authentication: null } },
    });
    expect((await api.get("/tokened", { Authorization: "Bearer t" })).status).toBe(200);
    await expect401(await api.get("/tokened", alice));
    expect((await api.get("/open")).status).toBe(200);
    await expect401(await api.get("/notes", { Authorization: "Bearer t" }));
  });

  it("protects only the resource that asks for it when there is no global auth", async () => {
    start({ DOMAIN: { notes, guarded: { ...notes, authentication: new BasicAuth({ users }) } } });
    expect((await api.get("/notes")).status).toBe(200);
    await expect401(await api.get("/guarded"));
  });

  it("opens PUBLIC_METHODS and PUBLIC_ITEM_METHODS, which resources override (an empty list restricts)", async () => {
    start({
      AUTH: new BasicAuth({ users }),
      PUBLIC_METHODS: ["GET"],
      PUBLIC_ITEM_METHODS: ["GET"],
      DOMAIN: { notes, closed: { ...notes, public_methods: [], public_item_methods: [] }, drop: { ...notes, public_methods: ["GET", "POST"] } },
    });
    expect((await api.get("/notes")).status).toBe(200);
    expect((await api.fetch("/notes", { method: "HEAD" })).status).toBe(200);
    await expect401(await api.post("/notes", { title: "x" }));
    const created = await json(await api.post("/notes", { title: "x" }, alice));
    expect((await api.get(`/notes/${created._id}`)).status).toBe(200);
    await expect401(await api.delete(`/notes/${created._id}`, { "If-Match": created._etag }));
    await expect401(await api.get("/closed"));
    const closed = await json(await api.post("/closed", { title: "x" }, alice));
    await expect401(await api.get(`/closed/${closed._id}`));
    expect((await api.post("/drop", { title: "x" })).status).toBe(201);
  });

  it("answers a CORS preflight without credentials", async () => {
    start({ AUTH: new BasicAuth({ users }), X_DOMAINS: ["https://app.example"], DOMAIN: { notes } });
    const response = await api.fetch("/notes", { method: "OPTIONS", headers: { Origin: "https://app.example", "Access-Control-Request-Method": "POST" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe("https://app.example");
    await expect401(await api.get("/notes", { Origin: "https://app.example" }));
  });

  it("passes the item or collection roles, read or write, as Eve chooses them", async () => {
    const seen: Array<[string, string[]]> = [];
    class Roles extends BasicAuth {
      override checkAuth(_u: string, _p: string, allowedRoles: string[], _r: string | null, method: string) {
        seen.push([method, allowedRoles]);
        return true;
      }
    }
    start({
      AUTH: Roles,
      ALLOWED_ROLES: ["r"],
      ALLOWED_READ_ROLES: ["rr"],
      ALLOWED_WRITE_ROLES: ["rw"],
      ALLOWED_ITEM_ROLES: ["i"],
      ALLOWED_ITEM_READ_ROLES: ["ir"],
      ALLOWED_ITEM_WRITE_ROLES: ["iw"],
      DOMAIN: { notes, special: { ...notes, allowed_roles: ["own"], allowed_write_roles: [] } },
    });
    await api.get("/", alice);
    seen.length = 0;
    const created = await json(await api.post("/notes", { title: "x" }, alice));
    await api.get("/notes", alice);
    await api.get(`/notes/${created._id}`, alice);
    await api.patch(`/notes/${created._id}`, { title: "y" }, { ...alice, "If-Match": "*" });
    await api.post("/special", { title: "x" }, alice);
    expect(seen).toEqual([
      ["POST", ["r", "rw"]],
      ["GET", ["r", "rr"]],
      ["GET", ["i", "ir"]],
      ["PATCH", ["i", "iw"]],
      ["POST", ["own"]],
    ]);
  });

  it("checks roles in the default checks", async () => {
    start({
      AUTH: new BasicAuth({ users: { alice: { password: "pw", roles: ["reader"] }, root: { password: "pw", roles: ["admin"] } } }),
      DOMAIN: { notes: { ...notes, allowed_read_roles: ["reader", "admin"], allowed_write_roles: ["admin"] } },
    });
    expect((await api.get("/notes", alice)).status).toBe(200);
    await expect401(await api.post("/notes", { title: "x" }, alice));
    expect((await api.post("/notes", { title: "x" }, basic("root", "pw"))).status).toBe(201);
  });
});

describe("listings", () => {
  it("shows on the home page only the resources the caller may read", async () => {
    const users = { alice: { password: "pw", roles: ["staff"] }, bob: { password: "pw" } };
    start({
      AUTH: new BasicAuth({ users }),
      PUBLIC_METHODS: ["GET"],
      DOMAIN: {
        notes: { ...notes, public_methods: [] },
        staff: { ...notes, public_methods: [], allowed_read_roles: ["staff"] },
        open: notes,
        hidden: { ...notes, internal_resource: true },
      },
    });
    const titles = async (headers?: Record<string, string>) => (await json(await api.get("/", headers)))._links.child.map((c: { href: string }) => c.href);
    expect(await titles()).toEqual(["open"]);
    expect(await titles(basic("bob", "pw"))).toEqual(["notes", "open"]);
    expect(await titles(basic("alice", "pw"))).toEqual(["notes", "staff", "open"]);
  });
});

describe("one shared auth instance, many concurrent requests", () => {
  it("keeps each request's user and auth value apart", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    class Slow extends BasicAuth {
      override async checkAuth(username: string, _p: string, _r: string[], _res: string | null, method: string, ctx: RequestContext) {
        ctx.setRequestAuthValue(username);
        // The first request waits here while the second one passes its own check.
        if (username === "first" && method === "GET") await gate;
        return true;
      }
    }
    start({ AUTH: new Slow(), AUTH_FIELD: "owner", DOMAIN: { notes } });
    await api.post("/notes", { title: "mine" }, basic("first", ""));
    await api.post("/notes", { title: "yours" }, basic("second", ""));
    const first = api.get("/notes", basic("first", ""));
    const second = await json(await api.get("/notes", basic("second", "")));
    release();
    expect(second._items.map((n: { title: string }) => n.title)).toEqual(["yours"]);
    expect((await json(await first))._items.map((n: { title: string }) => n.title)).toEqual(["mine"]);
  });
});

describe("timingSafeEqual", () => {
  it("is equality", () => {
    expect(timingSafeEqual("abc", "abc")).toBe(true);
    expect(timingSafeEqual("", "")).toBe(true);
    expect(timingSafeEqual("abc", "abd")).toBe(false);
    expect(timingSafeEqual("abc", "abcd")).toBe(false);
    expect(timingSafeEqual("abc", "")).toBe(false);
    expect(timingSafeEqual("é", "e\u0301")).toBe(false);
  });
});
