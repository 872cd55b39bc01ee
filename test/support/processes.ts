// Servers as real processes, started as users start them (`npm run serve:<runtime>`'s command,
// scripts/serve-command.ts) on a database of the test's choosing: the journal lock, graceful
// shutdown and several instances over one database are about processes, not handlers.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { READY_LINE, serveCommand, type Runtime } from "../../scripts/serve-command.ts";
import { signalGroup } from "./runtime.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface Served {
  child: ChildProcess;
  /** The base URL once it serves, or null when it exited first. */
  url: string | null;
  /** The server's own pid (the child is its parent when it runs under one that does not reap). */
  pid: number;
  output(): string;
  /** Settles when the process (its parent, when orphaned) has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ServeOptions {
  /** Under a shell that execs `sleep` and so never reaps it, as a container whose PID 1 is a shell. */
  orphaned?: boolean;
  /** A flag of the serve command to leave out (a Deno permission). */
  without?: string;
  env?: Record<string, string>;
  /** The Node binary to serve with (runtime "node"): another version than the suite's. */
  node?: string;
}

const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];

/** Whether `serve:<runtime>` can open SQLite here: node:sqlite came with Node 22.5 (or SQLITE_NODE names one, as .ci/run does). */
export function servesSqlite(runtime: Runtime): boolean {
  return runtime !== "node" || Boolean(process.env.SQLITE_NODE) || major > 22 || (major === 22 && minor >= 5);
}

/** Every server started, so that none is left behind whatever a test did. */
const started: ChildProcess[] = [];

/**
 * A directory of the test file's own with `settings` written to settings.json in it; after the
 * file's tests, every server they started is stopped and the directory removed. Its path is known
 * at once (test tables name files in it) but it is made only before the tests run: a file whose
 * tests are all skipped runs neither hook, and a directory made at collection would be left behind.
 */
export function workspace(name: string, settings: unknown): { dir: string; settingsFile: string } {
  const dir = join(tmpdir(), `everest-${name}-${randomUUID()}`);
  const settingsFile = join(dir, "settings.json");
  beforeAll(() => {
    mkdirSync(dir);
    writeFileSync(settingsFile, JSON.stringify(settings));
  });
  afterAll(() => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) signalGroup(child.pid!, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, settingsFile };
}

/** Starts `serve:<runtime>` on `db` in its own process group; resolves when it serves or exits. */
export function serveProcess(runtime: Runtime, settingsFile: string, db: string, options: ServeOptions = {}): Promise<Served> {
  const [program, ...args] = serveCommand(runtime);
  const node = (runtime === "node" && options.node) || (runtime === "node" && db.startsWith("sqlite:") && process.env.SQLITE_NODE ? process.env.SQLITE_NODE : program!);
  const argv = [node, ...args, settingsFile, "--port", "0", "--db", db].filter((arg) => arg !== options.without);
  const [command, ...rest] = options.orphaned ? ["sh", "-c", '"$@" & echo "pid $!"; exec sleep 600', "sh", ...argv] : argv;
  const child = spawn(command!, rest, { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env } });
  started.push(child);
  let text = "";
  const pid = () => (options.orphaned ? Number(/^pid (\d+)$/m.exec(text)?.[1]) : child.pid!);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("close", (code, signal) => resolve({ code, signal })));
  return new Promise((resolve) => {
    const served = (url: string | null): Served => ({ child, url, pid: pid(), output: () => text, exited });
    const seen = (chunk: string) => {
      text += chunk;
      const url = READY_LINE.exec(text)?.[1];
      if (url) resolve(served(url));
    };
    child.stdout!.setEncoding("utf8").on("data", seen);
    child.stderr!.setEncoding("utf8").on("data", seen);
    void exited.then(() => resolve(served(null)));
  });
}

/** SIGKILL to the server's process group, settled once it is gone. */
export async function killed(server: Served): Promise<void> {
  signalGroup(server.child.pid!, "SIGKILL");
  await server.exited;
}
