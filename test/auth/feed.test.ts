// The change feed is authorized like a GET (docs/feed.md, docs/auth.md): authentication, public
// methods, roles, user-restricted access (each subscriber sees only its own documents),
// datasource filters, rate limits; a browser's EventSource authenticates with its credential in
// CHANGE_FEED_AUTH_PARAM, which never reaches the access log.
import { describe, expect, it } from "vitest";
import { TokenAuth } from "../../src/auth/auth.ts";
import type { RequestContext } from "../../src/context.ts";
import type { ResourceSettings, Settings } from "../../src/settings/types.ts";
import type { HandlerOptions } from "../../src/app.ts";
import type { TestApi } from "../support/api.ts";
import { closedAfterEach, STREAM } from "../support/streams.ts";

class Users extends TokenAuth {
  override checkAuth(token: string, roles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean {
    const user = ({ "alice-token": "alice", "bob-token": "bob", "guest-token": "guest" } as Record<string, string>)[token];
    if (!user) return false;
    if (roles.length > 0 && !(user === "alice" && roles.includes("admin"))) return false;
    ctx.setRequestAuthValue(user);
    ctx.setRequestRoles(user === "alice" ? ["admin"] : []);
    return true;
  }
}

const alice = { Authorization: "Bearer alice-token" };
const bob = { Authorization: "Bearer bob-token" };
const writable = { resource_methods: ["GET", "POST"], item_methods: ["GET", "PATCH", "DELETE"] } satisfies ResourceSettings;

const settings = (extra: Settings = {}): Settings => ({
  AUTH: Users,
  CHANGE_FEED: true,
  DOMAIN: {
    notes: { ...writable, auth_field: "owner", schema: { title: { type: "string" }, owner: { type: "string" } } },
    news: { ...writable, public_methods: ["GET"], schema: { title: { type: "string" } } },
    reports: { ...writable, allowed_read_roles: ["admin"], schema: { title: { type: "string" } } },
    all_posts: { ...writable, schema: { title: { type: "string" }, published: { type: "boolean" } } },
    staff: { ...writable, schema: { name: { type: "string" }, salary: { type: "integer", allowed_read_roles: ["admin"] } } },
    diary: {
      ...writable,
      schema: {
        // TokenAuth names the caller by its token (ctx.user).
        owner: { type: "string" },
        secret: { type: "string", allowed_read_roles: ["nobody"], field_access: ({ mode, user, document, allowed }) => allowed || (mode === "read" && document?.owner === user) },
      },
    },
    published: { resource_methods: ["GET"], datasource: { source: "all_posts", filter: { published: true } }, schema: { title: { type: "string" }, published: { type: "boolean" } } },
    cards: {
      ...writable,
      schema: {
        person: { type: "objectid", data_relation: { resource: "staff", embeddable: true } },
        note: { type: "objectid", data_relation: { resource: "notes", embeddable: true } },
      },
    },
  },
  ...extra,
});

const streams = closedAfterEach();
const { stream } = streams;
const start = (extra?: Settings, options?: HandlerOptions): TestApi => streams.api(settings(extra), options);

describe("change feed: authorization", () => {
  it("shows each subscriber its own documents only (auth_field)", async () => {
    const api = start();
    const aliceEvents = await stream(api, "/notes", alice);
    const bobEvents = await stream(api, "/notes", bob);
    await api.post("/notes", { title: "alice's" }, alice);
    await api.post("/notes", { title: "bob's" }, bob);
    expect((await aliceEvents.expect("insert")).data.title).toBe("alice's");
    expect((await bobEvents.expect("insert")).data.title).toBe("bob's");
    expect(await aliceEvents.quiet(200)).toBe(true);
    expect(await bobEvents.quiet(50)).toBe(true);
  });

  it("refuses a stream without credentials (401), serves public GET to anyone, checks roles", async () => {
    const api = start();
    expect((await api.get("/notes", STREAM)).status).toBe(401);
    expect((await api.get("/notes", { ...STREAM, Authorization: "Bearer wrong" })).status).toBe(401);
    const anyone = await stream(api, "/news", {});
    await api.post("/news", { title: "hello" }, alice);
    expect((await anyone.expect("insert")).data.title).toBe("hello");
    expect((await api.get("/reports", { ...STREAM, ...bob })).status).toBe(401);
    await stream(api, "/reports", alice);
  });

  it("shows each subscriber the fields its roles may read, and refuses a where on a hidden one", async () => {
    const api = start();
    const admin = await stream(api, "/staff", alice);
    const other = await stream(api, "/staff", bob);
    const created = await (await api.post("/staff", { name: "ada", salary: 10 }, alice)).json();
    const seenByAdmin = (await admin.expect("insert")).data;
    const seenByOther = (await other.expect("insert")).data;
    expect(seenByAdmin.salary).toBe(10);
    expect(seenByOther.salary).toBeUndefined();
    expect(seenByOther.name).toBe("ada");
    expect(seenByAdmin).toEqual(await (await api.get(`/staff/${created._id}`, alice)).json());
    expect(seenByOther).toEqual(await (await api.get(`/staff/${created._id}`, bob)).json());
    expect(seenByOther._etag).not.toBe(seenByAdmin._etag);
    const probing = await api.get(`/staff?where=${encodeURIComponent(JSON.stringify({ salary: 10 }))}`, { ...STREAM, ...bob });
    expect(probing.status).toBe(400);
  });

  it("renders per caller where a field_access function decides, never sharing one caller's rendering", async () => {
    const api = start();
    const [first, second] = [await stream(api, "/diary", alice), await stream(api, "/diary", bob)];
    await api.post("/diary", { owner: "bob-token", secret: "for bob" }, bob);
    expect((await first.expect("insert")).data.secret).toBeUndefined();
    expect((await second.expect("insert")).data.secret).toBe("for bob");
    await api.post("/diary", { owner: "alice-token", secret: "for alice" }, alice);
    expect((await first.expect("insert")).data.secret).toBe("for alice");
    expect((await second.expect("insert")).data.secret).toBeUndefined();
  });

  it("embeds a reference as each subscriber's GET does: the fields its roles may read, and only its own documents", async () => {
    // Without diary's field_access function, under which no subscriber shares another's renderings.
    const { diary: _perCaller, ...domain } = settings().DOMAIN!;
    const api = start({ DOMAIN: domain });
    const embedded = `/cards?embedded=${encodeURIComponent(JSON.stringify({ person: 1, note: 1 }))}`;
    const [admin, other] = [await stream(api, embedded, alice), await stream(api, embedded, bob)];
    const person = await (await api.post("/staff", { name: "ada", salary: 10 }, alice)).json();
    const note = await (await api.post("/notes", { title: "alice's" }, alice)).json();
    const card = await (await api.post("/cards", { person: person._id, note: note._id }, alice)).json();
    const [seenByAdmin, seenByOther] = [(await admin.expect("insert")).data, (await other.expect("insert")).data];
    expect(seenByAdmin.person.salary).toBe(10);
    expect(seenByAdmin.note.title).toBe("alice's");
    expect(seenByOther.person.salary).toBeUndefined();
    expect(seenByOther.note).toBeNull();
    const asSeen = `/cards/${card._id}?embedded=${encodeURIComponent(JSON.stringify({ person: 1, note: 1 }))}`;
    expect(seenByAdmin).toEqual(await (await api.get(asSeen, alice)).json());
    expect(seenByOther).toEqual(await (await api.get(asSeen, bob)).json());
  });

  it("keeps to a datasource filter", async () => {
    const api = start();
    const events = await stream(api, "/published", alice);
    await api.post("/all_posts", { title: "draft", published: false }, alice);
    await api.post("/all_posts", { title: "out", published: true }, alice);
    expect((await events.expect("insert")).data.title).toBe("out");
  });

  it("counts a stream as a request against the rate limit", async () => {
    const api = start({ RATE_LIMIT_GET: [1, 60] });
    await stream(api, "/news", {});
    expect((await api.get("/news", STREAM)).status).toBe(429);
  });
});

describe("change feed: a browser's credential", () => {
  it("takes the credential from CHANGE_FEED_AUTH_PARAM and keeps it out of the access log", async () => {
    const lines: string[] = [];
    const api = start({ ACCESS_LOG: "text" }, { accessLog: (line) => lines.push(line) });
    const events = await stream(api, "/notes?access_token=alice-token", {});
    await api.post("/notes", { title: "mine" }, alice);
    expect((await events.expect("insert")).data.title).toBe("mine");
    expect((await api.get("/notes?access_token=bob-token", STREAM)).status).toBe(200);
    expect((await api.get("/notes?access_token=nobody", STREAM)).status).toBe(401);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).not.toMatch(/token/);
  });

  it("leaves the parameter alone on anything but a stream, and can be turned off", async () => {
    const api = start();
    expect((await api.get("/notes?access_token=alice-token")).status).toBe(401);
    const off = start({ CHANGE_FEED_AUTH_PARAM: null });
    expect((await off.get("/notes?access_token=alice-token", STREAM)).status).toBe(401);
  });
});
