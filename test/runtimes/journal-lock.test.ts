// One journal, one writer, on the runtime EVEREST_TEST_RUNTIME names (test/runtimes/run.ts runs
// this file once per runtime): a second server on the same `file:` journal refuses to start and
// says why, and a server killed with SIGKILL leaves a lock file that does not block the restart
// (the lock names a pid that is gone; adapters/node-files.ts). Workers have no file system, so
// no `file:` store, and nothing to lock.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
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

interface Outcome {
  child: ChildProcess;
  /** The base URL once it serves, or null when it exited first. */
  url: string | null;
  output: () => string;
}

/**
 * Starts `serve:<runtime>` on the journal in its own process group; resolves when it serves or
 * exits. `without` drops a flag of the command (a Deno permission).
 */
function serve(settingsFile: string, journal: string, without?: string): Promise<Outcome> {
  const [program, ...args] = serveCommand(runtime).filter((arg) => arg !== without);
  const child = spawn(program!, [...args, settingsFile, "--port", "0", "--db", `file:${journal}`], { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  started.push(child);
  let text = "";
  const output = () => text;
  return new Promise((resolve) => {
    const seen = (chunk: string) => {
      text += chunk;
      const url = READY_LINE.exec(text)?.[1];
      if (url) resolve({ child, url, output });
    };
    child.stdout!.setEncoding("utf8").on("data", seen);
    child.stderr!.setEncoding("utf8").on("data", seen);
    child.once("close", () => resolve({ child, url: null, output }));
  });
}

async function killed(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once("close", resolve));
  signalGroup(child.pid!, "SIGKILL");
  await gone;
}

describe.skipIf(runtime === "workers")(`one writer per journal (${runtime})`, () => {
  it("a second server is refused, naming the holder; after a SIGKILL the stale lock does not block a restart", async () => {
    const settingsFile = join(dir, "settings.json");
    writeFileSync(settingsFile, JSON.stringify({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { people: { schema: { name: { type: "string" } } } } }));
    const journal = join(dir, "journal.jsonl");

    const first = await serve(settingsFile, journal);
    expect(first.url, first.output()).not.toBeNull();
    const posted = await fetch(`${first.url}/people`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name: "kept" }) });
    expect(posted.status).toBe(201);

    const second = await serve(settingsFile, journal);
    expect(second.url).toBeNull();
    expect(second.child.exitCode).not.toBe(0);
    expect(second.output()).toMatch(new RegExp(`the journal \\S*journal\\.jsonl is in use by process \\d+`));

    await killed(first.child);
    expect(readdirSync(dir)).toContain("journal.jsonl.lock");

    const restarted = await serve(settingsFile, journal);
    expect(restarted.url, restarted.output()).not.toBeNull();
    const body = (await (await fetch(`${restarted.url}/people`)).json()) as { _items: Array<{ name: string }> };
    expect(body._items.map((item) => item.name)).toEqual(["kept"]);
    await killed(restarted.child);
  });

  // Deno may not signal another process, nor read /proc, without --allow-run: it cannot tell a
  // live holder from a dead one, so the lock must count as held, and the refusal must say why.
  it.runIf(runtime === "deno")("without --allow-run a lock counts as held, live or stale, and the refusal names the flag", async () => {
    const settingsFile = join(dir, "settings.json");
    const journal = join(dir, "no-run.jsonl");
    const first = await serve(settingsFile, journal, "--allow-run");
    expect(first.url, first.output()).not.toBeNull();
    const second = await serve(settingsFile, journal, "--allow-run");
    expect(second.url).toBeNull();
    expect(second.output()).toContain("run with --allow-run");
    await killed(first.child);
    const stale = await serve(settingsFile, journal, "--allow-run");
    expect(stale.url).toBeNull();
    expect(stale.output()).toContain("delete the lock file");
    const allowed = await serve(settingsFile, journal);
    expect(allowed.url, allowed.output()).not.toBeNull();
    await killed(allowed.child);
  });
});
