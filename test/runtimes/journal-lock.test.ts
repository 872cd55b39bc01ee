// One writer per journal, and a restart right after a crash, on the runtime EVEREST_TEST_RUNTIME
// names (test/runtimes/run.ts runs this file once per runtime). A second live server on the same
// `file:` journal refuses to start and names the holder, whether it runs on this runtime or
// another (their kernel locks differ: adapters/kernel-lock.ts). A server killed with SIGKILL
// under a parent that never reaps it (a container whose PID 1 is a shell) stays a zombie, and a
// server started at once on its journal or SQLite file serves with every acknowledged write.
// Several live servers on one SQLite file are allowed: SQLite is made for it (docs/deploy.md).
// Workers have no file system, so no `file:` store, and nothing to lock.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Runtime } from "../../scripts/serve-command.ts";
import { killed, serveProcess, servesSqlite, workspace, type Served, type ServeOptions } from "../support/processes.ts";

const runtime = (process.env.EVEREST_TEST_RUNTIME ?? "node") as Runtime;
const { dir, settingsFile } = workspace("journal-lock", { RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } } } });

const serve = (db: string, options: ServeOptions & { on?: Runtime } = {}) => serveProcess(options.on ?? runtime, settingsFile, db, options);

/** SIGKILL to the server alone; its parent, which never reaps, leaves it a zombie. */
async function crashed(server: Served): Promise<void> {
  process.kill(server.pid, "SIGKILL");
  const state = () => readFileSync(`/proc/${server.pid}/stat`, "utf8").split(") ")[1]![0];
  await expect.poll(state, { timeout: 10_000 }).toBe("Z");
}

async function post(url: string, name: string): Promise<void> {
  const response = await fetch(`${url}/people`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name }) });
  expect(response.status).toBe(201);
}

async function names(url: string): Promise<string[]> {
  const body = (await (await fetch(`${url}/people?max_results=50`)).json()) as { _items: Array<{ name: string }> };
  return body._items.map((item) => item.name).sort();
}

/** A runtime other than this one, to hold or claim the same journal. */
const other: Runtime = runtime === "node" ? "deno" : "node";

describe.skipIf(runtime === "workers")(`one writer per journal (${runtime})`, () => {
  it("a second server is refused, naming the holder; after a SIGKILL the stale lock does not block a restart", async () => {
    const db = `file:${join(dir, "journal.jsonl")}`;
    const first = await serve(db);
    expect(first.url, first.output()).not.toBeNull();
    await post(first.url!, "kept");

    const second = await serve(db);
    expect(second.url).toBeNull();
    expect(second.child.exitCode).not.toBe(0);
    expect(second.output()).toMatch(new RegExp(`the journal \\S*journal\\.jsonl is in use by process ${first.pid}\\b`));

    // A server of another runtime takes another kind of kernel lock, and is refused all the same.
    const foreign = await serve(db, { on: other });
    expect(foreign.url).toBeNull();
    expect(foreign.output()).toMatch(new RegExp(`is in use by process ${first.pid}\\b`));

    await killed(first);
    const restarted = await serve(db);
    expect(restarted.url, restarted.output()).not.toBeNull();
    expect(await names(restarted.url!)).toEqual(["kept"]);
    await killed(restarted);
  });

  // Node 20 binds an abstract socket name padded to sun_path, Node 22 and later at its own
  // length: unpadded, each saw no lock the other held, and both wrote one journal.
  it.runIf(runtime === "node" && process.platform === "linux" && Boolean(process.env.SQLITE_NODE))("a server on another Node version is refused, either way round", async () => {
    for (const [holder, claimant] of [[undefined, process.env.SQLITE_NODE], [process.env.SQLITE_NODE, undefined]] as const) {
      const db = `file:${join(dir, `versions-${holder ? "newer" : "suite"}.jsonl`)}`;
      const first = await serve(db, holder ? { node: holder } : {});
      expect(first.url, first.output()).not.toBeNull();
      const second = await serve(db, claimant ? { node: claimant } : {});
      expect(second.url, second.output()).toBeNull();
      expect(second.output()).toMatch(new RegExp(`is in use by process ${first.pid}\\b`));
      await killed(first);
    }
  });

  it.runIf(process.platform === "linux")("a server killed under a parent that never reaps it is restarted at once on its journal", async () => {
    const db = `file:${join(dir, "orphaned.jsonl")}`;
    const first = await serve(db, { orphaned: true });
    expect(first.url, first.output()).not.toBeNull();
    await post(first.url!, "before the crash");
    await crashed(first);

    const restarted = await serve(db, { orphaned: true });
    expect(restarted.url, restarted.output()).not.toBeNull();
    expect(await names(restarted.url!)).toEqual(["before the crash"]);
    // …and holds the journal as firmly as the first did.
    const second = await serve(db);
    expect(second.url).toBeNull();
    expect(second.output()).toMatch(new RegExp(`is in use by process ${restarted.pid}\\b`));
    await killed(restarted);
    await killed(first);
  });

  it.runIf(process.platform === "linux")("a journal held by another runtime's server that was killed unreaped is taken at once", async () => {
    const db = `file:${join(dir, "foreign.jsonl")}`;
    const first = await serve(db, { on: other, orphaned: true });
    expect(first.url, first.output()).not.toBeNull();
    await post(first.url!, "written by another runtime");
    await crashed(first);
    const restarted = await serve(db);
    expect(restarted.url, restarted.output()).not.toBeNull();
    expect(await names(restarted.url!)).toEqual(["written by another runtime"]);
    await killed(restarted);
    await killed(first);
  });

  // SQLite locks the file itself, per transaction, and the kernel drops a dead process's locks;
  // several servers on one file are how SQLite is run with more than one instance.
  it.runIf(process.platform === "linux" && servesSqlite(runtime))(
    "SQLite: a server killed unreaped is restarted at once, and two live servers share the file",
    async () => {
      const db = `sqlite:${join(dir, "data.db")}`;
      const first = await serve(db, { orphaned: true });
      expect(first.url, first.output()).not.toBeNull();
      await post(first.url!, "one");
      await crashed(first);
      const restarted = await serve(db);
      expect(restarted.url, restarted.output()).not.toBeNull();
      const second = await serve(db);
      expect(second.url, second.output()).not.toBeNull();
      await post(second.url!, "two");
      expect(await names(restarted.url!)).toEqual(["one", "two"]);
      await killed(restarted);
      await killed(second);
      await killed(first);
    },
  );

  // Deno may not signal another process without --allow-run; on Linux it no longer needs to,
  // since its lock is a flock and a Node holder's record is read from /proc.
  it.runIf(runtime === "deno" && process.platform === "linux")("without --allow-run, a live holder is still refused and a killed one's journal is taken", async () => {
    const db = `file:${join(dir, "no-run.jsonl")}`;
    const first = await serve(db, { without: "--allow-run" });
    expect(first.url, first.output()).not.toBeNull();
    const second = await serve(db, { without: "--allow-run" });
    expect(second.url).toBeNull();
    expect(second.output()).toMatch(new RegExp(`is in use by process ${first.pid}\\b`));
    await killed(first);
    const restarted = await serve(db, { without: "--allow-run" });
    expect(restarted.url, restarted.output()).not.toBeNull();
    await killed(restarted);
  });
});
