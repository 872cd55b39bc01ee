// Graceful shutdown on the runtime EVEREST_TEST_RUNTIME names (test/runtimes/run.ts runs this
// file once per runtime): SIGTERM (and SIGINT) while 50 writes are on their way. The server stops
// taking connections, lets the requests it took finish, closes the journal or SQLite file and
// exits 0; every write it acknowledged is there after a restart, and no client sees a response
// cut in the middle — a request the server never took is refused before any byte of an answer.
// Workers are stopped by their platform, not by a signal; what is checked for them is the local
// server's own stop (scripts/serve-workers.ts): it ends and leaves no bundle directory behind.
import { mkdirSync, readdirSync } from "node:fs";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Runtime } from "../../scripts/serve-command.ts";
import { serveProcess, servesSqlite, workspace, type Served } from "../support/processes.ts";

const runtime = (process.env.EVEREST_TEST_RUNTIME ?? "node") as Runtime;
// A bound below the 5 s a keep-alive connection idles in Node by default: one the server kept
// open after answering would show as a drain that ran out of time.
const settings = { RESOURCE_METHODS: ["GET", "POST"], PAGINATION_LIMIT: 100, SHUTDOWN_TIMEOUT: 2, DOMAIN: { people: { schema: { name: { type: "string" } } } } };
const { dir, settingsFile } = workspace("shutdown", settings);
const WRITES = 50;

async function serve(db: string): Promise<Served & { url: string }> {
  const server = await serveProcess(runtime, settingsFile, db);
  if (!server.url) throw new Error(`the server exited before serving:\n${server.output()}`);
  return server as Served & { url: string };
}

type Outcome =
  | { kind: "answered"; status: number; name: string }
  /** No byte of an answer came: the server never took the request. */
  | { kind: "refused"; code: string }
  /** An answer began and was cut: what must never happen. */
  | { kind: "cut"; status: number; received: number; expected: number };

/**
 * One POST on a connection of its own, telling a whole answer from a refused or a cut one. With
 * `held`, the body's second half waits for it: the request is then in the server's hands, its
 * body still coming, when the signal arrives, and must be answered all the same; its connection
 * is a keep-alive one, which the client would keep open.
 */
function write(url: string, name: string, held?: Promise<void>): Promise<Outcome> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ name });
    const agent = held ? keepAlive : false;
    const req = request(`${url}/people`, { method: "POST", agent, headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } }, (res) => {
      let received = 0;
      const expected = Number(res.headers["content-length"]);
      res.on("data", (chunk: Buffer) => (received += chunk.length));
      res.on("end", () => resolve(received === expected ? { kind: "answered", status: res.statusCode!, name } : { kind: "cut", status: res.statusCode!, received, expected }));
      res.on("error", () => resolve({ kind: "cut", status: res.statusCode!, received, expected }));
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ kind: "refused", code: error.code ?? error.message }));
    if (!held) return void req.end(body);
    req.write(body.slice(0, 5));
    void held.then(() => req.end(body.slice(5)));
  });
}

const keepAlive = new Agent({ keepAlive: true });
afterAll(() => keepAlive.destroy());

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function stored(url: string): Promise<Set<string>> {
  const response = await fetch(`${url}/people?max_results=100`);
  const body = (await response.json()) as { _items: Array<{ name: string }> };
  return new Set(body._items.map((item) => item.name));
}

describe.skipIf(runtime === "workers")(`graceful shutdown (${runtime})`, () => {
  const cases: Array<[string, NodeJS.Signals, string]> = [
    ["the journal", "SIGTERM", `file:${join(dir, "journal.jsonl")}`],
    ["the journal", "SIGINT", `file:${join(dir, "interrupted.jsonl")}`],
    ...(servesSqlite(runtime) ? [["a SQLite file", "SIGTERM", `sqlite:${join(dir, "data.db")}`] as [string, NodeJS.Signals, string]] : []),
  ];
  it.each(cases)("%s, %s during 50 writes: every acknowledged write kept, no answer cut, exit 0", async (_what, signal, db) => {
    const server = await serve(db);
    let release!: () => void;
    const slow = write(server.url, "slow writer", new Promise((resolve) => (release = resolve)));
    await pause(300);
    let answered = 0;
    const signalled = new Promise<void>((resolve) => {
      void Promise.all(
        Array.from({ length: WRITES }, (_, i) =>
          write(server.url, `writer ${i}`).then((outcome) => {
            // The signal lands while most writes are still on their way.
            if (outcome.kind === "answered" && ++answered === 3) resolve();
            return outcome;
          }),
        ),
      ).then((outcomes) => (resolve(), (writes = outcomes)));
    });
    let writes: Outcome[] = [];
    await signalled;
    process.kill(server.child.pid!, signal);
    // The slow writer's body is still coming once shutdown has begun.
    await pause(300);
    release();
    const slowOutcome = await slow;
    const exit = await server.exited;
    await expect.poll(() => writes.length).toBe(WRITES);
    const outcomes = [slowOutcome, ...writes];
    expect(slowOutcome).toEqual({ kind: "answered", status: 201, name: "slow writer" });
    expect(exit.code, server.output()).toBe(0);
    // Drained within the bound: no request left, no connection kept open after its answer.
    expect(server.output()).not.toContain("SHUTDOWN_TIMEOUT");
    expect(outcomes.filter((outcome) => outcome.kind === "cut")).toEqual([]);
    const acknowledged = outcomes.flatMap((outcome) => (outcome.kind === "answered" && outcome.status === 201 ? [outcome.name] : []));
    expect(acknowledged.length).toBeGreaterThanOrEqual(3);
    // Whatever was not acknowledged got a whole error answer or no answer at all.
    for (const outcome of outcomes) if (outcome.kind === "answered") expect([201, 503]).toContain(outcome.status);

    const restarted = await serve(db);
    // Kept: every acknowledged write; and nothing else, since a write the server took was answered.
    expect([...(await stored(restarted.url))].sort()).toEqual(acknowledged.sort());
    process.kill(restarted.pid, "SIGTERM");
    expect((await restarted.exited).code).toBe(0);
  });

  it.each([["SIGTERM", "SIGTERM"], ["SIGTERM", "SIGINT"]] as Array<[NodeJS.Signals, NodeJS.Signals]>)(
    "%s, then %s during the drain: the process ends at once, exit 1 (docs/deploy.md)",
    async (first, second) => {
      const server = await serve("memory");
      let release!: () => void;
      // A request that stays in flight: the drain would wait SHUTDOWN_TIMEOUT for it.
      const slow = write(server.url, "held", new Promise((resolve) => (release = resolve)));
      await pause(300);
      process.kill(server.child.pid!, first);
      await pause(300);
      process.kill(server.child.pid!, second);
      const exit = await server.exited;
      release();
      await slow;
      expect(exit.code, server.output()).toBe(1);
      expect(server.output()).toContain("a second signal during the shutdown");
      expect(server.output()).not.toContain("SHUTDOWN_TIMEOUT");
    },
  );
});

describe.runIf(runtime === "workers")("serve:workers stopped by SIGTERM", () => {
  // Its own temporary directory (TMPDIR), so what other test files leave in the shared one does
  // not count. Under d1: miniflare's own SIGTERM handler ends the process, which once left the
  // bundle behind (some 4,000 directories had piled up on one machine).
  it.each(["memory", "d1:DB"])("on %s: exits, and its bundle directory is gone", async (db) => {
    const tmp = join(dir, `tmp-${db.replace(/\W/g, "")}`);
    mkdirSync(tmp);
    const bundles = () => readdirSync(tmp).filter((name) => name.startsWith("everest-"));
    const server = await serveProcess(runtime, settingsFile, db, { env: { TMPDIR: tmp } });
    expect(server.url, server.output()).not.toBeNull();
    expect((await fetch(`${server.url}/people`)).status).toBe(200);
    // The bundle is where this test looks for it.
    expect(bundles()).toHaveLength(1);
    process.kill(server.pid, "SIGTERM");
    await server.exited;
    expect(bundles()).toEqual([]);
  });
});
