// Several instances over one database (npm run test:instances; .ci/run runs it): two everest
// server processes, as a load balancer would spread clients over them, on one SQLite file and on
// one MongoDB database (the emulator at MONGODB_URI). What one instance guarantees must hold
// across both: one winner among racing conditional writes, unique values, DELETE against PUT
// with one ETag, a write read at once through the other instance, counts, and rate limits
// counted together (RATE_LIMIT_STORE "database", and Redis).
import { MongoClient } from "mongodb";
import { ObjectId } from "bson";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killed, serveProcess, workspace, type Served } from "../support/processes.ts";
import { HAS_REDIS, RedisServer } from "../support/redis.ts";

const settings = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  PAGINATION_LIMIT: 200,
  DOMAIN: {
    people: { schema: { name: { type: "string" }, email: { type: "string", unique: true }, n: { type: "integer" } } },
    notes: { resource_methods: ["GET"], schema: {} },
    events: { schema: { k: { type: "integer" } } },
  },
};
const { dir, settingsFile } = workspace("instances", settings);

interface Store {
  name: string;
  db: string;
  /** RATE_LIMIT_STORE for the rate-limit case. */
  rateLimits: string;
  cleanup?: () => Promise<void>;
}

const redis = HAS_REDIS ? RedisServer.start() : null;
const mongoDatabase = `instances_${new ObjectId().toHexString()}`;
const stores: Store[] = [
  { name: "one SQLite file", db: `sqlite:${join(dir, "shared.db")}`, rateLimits: "database" },
  ...(process.env.MONGODB_URI
    ? [
        {
          name: "one MongoDB database",
          db: `${process.env.MONGODB_URI.replace(/\/?$/, "/")}${mongoDatabase}`,
          rateLimits: "database",
          cleanup: async () => {
            const client = await MongoClient.connect(process.env.MONGODB_URI!);
            await client.db(mongoDatabase).dropDatabase();
            await client.close();
          },
        },
      ]
    : []),
];
afterAll(async () => (await redis)?.stop());

const json = { "Content-Type": "application/json" };
type Answer = { status: number; body: Record<string, unknown>; etag: string | null; total: string | null };

async function send(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(base + path, init);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, etag: response.headers.get("etag"), total: response.headers.get("x-total-count") };
}

const post = (base: string, doc: unknown) => send(base, "/people", { method: "POST", headers: json, body: JSON.stringify(doc) });

describe.each(stores)("two instances over $name", (store) => {
  let a: Served;
  let b: Served;
  /** The two instances, as a load balancer alternates between them. */
  const at = (i: number) => (i % 2 === 0 ? a.url! : b.url!);

  beforeAll(async () => {
    [a, b] = await Promise.all([serveProcess("node", settingsFile, store.db), serveProcess("node", settingsFile, store.db)]);
    expect(a.url, a.output()).not.toBeNull();
    expect(b.url, b.output()).not.toBeNull();
  });
  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map(killed));
    await store.cleanup?.();
  });

  // The two processes take the SQLite file's write lock in turns (src/drivers/sqlite/write-turns.ts):
  // a burst one process would serve is served by two, where each write on a timer of its own
  // waited past 5 s and was answered 503 (17 of 4,000 on the 2-core machine this was written on).
  it.runIf(store.db.startsWith("sqlite:"))("a burst of writes through both is served whole, none answered 503", async () => {
    const statuses = await Promise.all(
      Array.from({ length: 4000 }, async (_, k) => (await send(at(k), "/events", { method: "POST", headers: json, body: JSON.stringify({ k }) })).status),
    );
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
    expect((await send(b.url!, "/events?max_results=1")).body._meta).toMatchObject({ total: 4000 });
  }, 120_000);

  it("one winner among conditional writes racing with one ETag", async () => {
    const created = await post(a.url!, { name: "race", n: 0 });
    const id = created.body._id as string;
    const { etag } = await send(b.url!, `/people/${id}`);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => send(at(i), `/people/${id}`, { method: "PATCH", headers: { ...json, "If-Match": etag! }, body: JSON.stringify({ n: i + 1 }) })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...Array(11).fill(412)]);
    const winner = answers.findIndex((answer) => answer.status === 200) + 1;
    for (const base of [a.url!, b.url!]) expect((await send(base, `/people/${id}`)).body.n).toBe(winner);
  });

  it("a unique value stored once when posted at once through both", async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(at(i), { name: `twin ${i}`, email: "twin@example.com" })));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    for (const answer of answers.filter((one) => one.status !== 201)) {
      expect(answer.status).toBe(422);
      expect(answer.body._issues).toEqual({ email: "value 'twin@example.com' is not unique" });
    }
    expect((await send(b.url!, `/people?where=${encodeURIComponent('{"email": "twin@example.com"}')}`)).body._meta).toMatchObject({ total: 1 });
  });

  it("DELETE against PUT with one ETag: one of them, and both instances agree which", async () => {
    for (let round = 0; round < 6; round++) {
      const { body } = await post(at(round), { name: `contested ${round}` });
      const id = body._id as string;
      const { etag } = await send(at(round + 1), `/people/${id}`);
      const [removal, replacement] = await Promise.all([
        send(at(round), `/people/${id}`, { method: "DELETE", headers: { "If-Match": etag! } }),
        send(at(round + 1), `/people/${id}`, { method: "PUT", headers: { ...json, "If-Match": etag! }, body: JSON.stringify({ name: "replaced" }) }),
      ]);
      const statuses = [removal.status, replacement.status];
      expect([JSON.stringify([204, 412]), JSON.stringify([204, 404]), JSON.stringify([412, 200])]).toContain(JSON.stringify(statuses));
      for (const base of [a.url!, b.url!]) {
        const stored = await send(base, `/people/${id}`);
        if (removal.status === 204) expect(stored.status).toBe(404);
        else expect([stored.status, stored.body.name]).toEqual([200, "replaced"]);
      }
    }
  });

  it("a write is read at once through the other instance, ETag and all", async () => {
    for (let i = 0; i < 10; i++) {
      const created = await post(at(i), { name: `seen ${i}` });
      expect(created.status).toBe(201);
      const read = await send(at(i + 1), `/people/${created.body._id}`);
      expect([read.status, read.body.name, read.etag]).toEqual([200, `seen ${i}`, `"${created.body._etag}"`]);
      const patched = await send(at(i + 1), `/people/${created.body._id}`, { method: "PATCH", headers: { ...json, "If-Match": read.etag! }, body: '{"n": 7}' });
      expect(patched.status).toBe(200);
      expect((await send(at(i), `/people/${created.body._id}`)).body).toMatchObject({ n: 7, _etag: patched.body._etag });
    }
  });

  it("counts: writes through both, the same total through each", async () => {
    const before = Number((await send(a.url!, "/people?max_results=1")).total);
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => post(at(i), { name: `counted ${i}` })));
    expect(answers.every((answer) => answer.status === 201)).toBe(true);
    for (const base of [a.url!, b.url!]) {
      const page = await send(base, "/people?max_results=1");
      expect([page.total, (page.body._meta as { total: number }).total]).toEqual([String(before + 24), before + 24]);
    }
  });
});

/**
 * Two more instances on the store, with RATE_LIMIT_STORE set; a limit of 10 GETs an hour, and
 * 30 GETs from one client alternating between them: 10 pass, wherever they land.
 */
async function sharedLimit(db: string, rateLimitStore: string): Promise<number[]> {
  // In the file's workspace: one made here, inside a test, would have no afterAll to remove it.
  const limited = join(dir, `limited-${new ObjectId().toHexString()}.json`);
  writeFileSync(limited, JSON.stringify({ ...settings, RATE_LIMIT_GET: [10, 3600], RATE_LIMIT_STORE: rateLimitStore }));
  const servers = await Promise.all([serveProcess("node", limited, db), serveProcess("node", limited, db)]);
  try {
    for (const server of servers) expect(server.url, server.output()).not.toBeNull();
    // A window that ends during the 30 requests would let more through; wait out its last seconds.
    const left = 3600_000 - (Date.now() % 3600_000);
    if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await fetch(`${servers[i % 2]!.url}/notes`)).status);
    return statuses;
  } finally {
    await Promise.all(servers.map(killed));
  }
}

describe("rate limits shared by two instances", () => {
  const cases = stores.map((store) => [`the database (${store.name})`, store.db, store.rateLimits] as const);
  it.each(cases)("counted in %s: 30 requests alternating, 10 pass", async (_name, db, rateLimitStore) => {
    const statuses = await sharedLimit(db, rateLimitStore);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(statuses.slice(10)).toEqual(Array(20).fill(429));
  });

  it.runIf(HAS_REDIS)("counted in Redis: 30 requests alternating, 10 pass", async () => {
    const statuses = await sharedLimit(`sqlite:${join(dir, "redis-limits.db")}`, (await redis!).url);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(statuses.slice(10)).toEqual(Array(20).fill(429));
  });

  it("counted in each process with the default store: each instance lets 10 through", async () => {
    const statuses = await sharedLimit(`sqlite:${join(dir, "local-limits.db")}`, "memory");
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
  });
});
