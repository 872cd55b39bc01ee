// One writer per journal, and a restart right after a crash, on the runtime EVEREST_TEST_RUNTIME
// names (test/runtimes/run.ts runs this file once per runtime). A second live server on the same
// `file:` journal refuses to start and names the holder, whether it runs on this runtime or
// another (their kernel locks differ: adapters/kernel-lock.ts). A server killed with SIGKILL
// under a parent that never reaps it (a container whose PID 1 is a shell) stays a zombie, and a
// server started at once on its journal or SQLite file serves with every acknowledged write.
// Several live servers on one SQLite file are allowed: SQLite is made for it (docs/deploy.md).
// Workers have no file system, so no `file:` store, and nothing to lock.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { READY_LINE, serveCommand, type Runtime } from "../../scripts/serve-command.ts";
import { signalGroup } from "../support/runtime.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const runtime = (process.env.EVEREST_TEST_RUNTIME ?? "node") as Runtime;
const dir = mkdtempSync(join(tmpdir(), "everest-journal-lock-"));
const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) signalGroup(child.pid!, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const settingsFile = join(dir, "settings.json");
writeFileSync(settingsFile, JSON.stringify({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } } } }));

interface Outcome {
  child: ChildProcess;
  /** The base URL once it serves, or null when it exited first. */
  url: string | null;
  /** The server's own pid (the child is its parent when it runs under one that does not reap). */
  pid: number;
  output: () => string;
}

/** The serve command of a runtime; node:sqlite needs a newer Node than this one may be (SQLITE_NODE, .ci/run). */
function command(on: Runtime, db: string): string[] {
  const [program, ...args] = serveCommand(on);
  const node = on === "node" && db.startsWith("sqlite:") && process.env.SQLITE_NODE ? process.env.SQLITE_NODE : program!;
  return [node, ...args];
}

/**
 * Starts `serve:<runtime>` on `db` in its own process group; resolves when it serves or exits.
 * `orphaned` puts it under a shell that execs `sleep` and so never reaps it; `without` drops a
 * flag of the command (a Deno permission).
 */
function serve(db: string, options: { on?: Runtime; orphaned?: boolean; without?: string } = {}): Promise<Outcome> {
  const argv = [...command(options.on ?? runtime, db).filter((arg) => arg !== options.without), settingsFile, "--port", "0", "--db", db];
  const [program, ...args] = options.orphaned ? ["sh", "-c", '"$@" & echo "pid $!"; exec sleep 600', "sh", ...argv] : argv;
  const child = spawn(program!, args, { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  started.push(child);
  let text = "";
  const output = () => text;
  const pid = () => (options.orphaned ? Number(/^pid (\d+)$/m.exec(text)?.[1]) : child.pid!);
  return new Promise((resolve) => {
    const seen = (chunk: string) => {
      text += chunk;
      const url = READY_LINE.exec(text)?.[1];
      if (url) resolve({ child, url, pid: pid(), output });
    };
    child.stdout!.setEncoding("utf8").on("data", seen);
    child.stderr!.setEncoding("utf8").on("data", seen);
    child.once("close", () => resolve({ child, url: null, pid: pid(), output }));
  });
}

async function killed(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once("close", resolve));
  signalGroup(child.pid!, "SIGKILL");
  await gone;
}

/** SIGKILL to the server alone; its parent, which never reaps, leaves it a zombie. */
async function crashed(server: Outcome): Promise<void> {
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

const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 5);

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

    await killed(first.child);
    const restarted = await serve(db);
    expect(restarted.url, restarted.output()).not.toBeNull();
    expect(await names(restarted.url!)).toEqual(["kept"]);
    await killed(restarted.child);
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
    await killed(restarted.child);
    await killed(first.child);
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
    await killed(restarted.child);
    await killed(first.child);
  });

  // SQLite locks the file itself, per transaction, and the kernel drops a dead process's locks;
  // several servers on one file are how SQLite is run with more than one instance.
  it.runIf(process.platform === "linux" && (runtime !== "node" || process.env.SQLITE_NODE || hasNodeSqlite))(
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
      await killed(restarted.child);
      await killed(second.child);
      await killed(first.child);
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
    await killed(first.child);
    const restarted = await serve(db, { without: "--allow-run" });
    expect(restarted.url, restarted.output()).not.toBeNull();
    await killed(restarted.child);
  });
});
