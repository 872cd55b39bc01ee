// `everest serve` on workerd, the runtime of Cloudflare Workers, offline: bundles the settings
// file with scripts/build-worker.ts (an entry module and the chunks it loads on demand; for a JSON
// file, an entry holding the settings over everest's bundle kept from an earlier start,
// scripts/worker-cache.ts), writes a workerd config beside it listing every module and runs the
// workerd binary that wrangler itself uses. Same command line as the other runtimes:
//   node --import tsx scripts/serve-workers.ts serve <settings.json> [--port 8787] [--host 127.0.0.1] [--db …]
// --db (or $DB_URI) and $DB_NAME, $DATA_API_KEY, $DATA_API_SOURCE become text bindings, which
// the worker maps into the settings as it does a deployment's vars and secrets. With
// `--db d1:NAME` the worker runs under miniflare with a local D1 database bound as NAME
// (scripts/serve-d1.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { connect, createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseServeArgs } from "../adapters/serve-args.ts";
import { serverUrl } from "../adapters/server.ts";
import { DEFAULT_D1_BINDING, ENV_SETTINGS } from "../adapters/workers-bindings.ts";
import { buildWorker, type WorkerModule } from "./build-worker.ts";
import { workerForJsonSettings } from "./worker-cache.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
// The binary itself, not the package's bin entry, which may be a Node script that hands only
// fds 0-2 on to it (spawnOnSocket passes a fourth).
const WORKERD = (createRequire(import.meta.url)("workerd") as { default: string }).default;
const STARTUP_LIMIT_MS = 30_000;
/** How long a stopped workerd may finish the requests it has: a local server's are quick. */
const DRAIN_LIMIT_MS = 1_000;

/** wrangler.toml keeps the compatibility date and flags, so `wrangler dev` and this agree. */
async function compatibility(): Promise<{ date: string; flags: string[] }> {
  const toml = await readFile(resolve(ROOT, "wrangler.toml"), "utf8");
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  if (!date) throw new Error("wrangler.toml has no compatibility_date");
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1] ?? "";
  return { date, flags: [...flags.matchAll(/"([^"]+)"/g)].map((match) => match[1]!) };
}

/**
 * workerd serving on a socket this process opens and hands over as its fd 3 (`--socket-fd`):
 * with port 0 the system picks the port, and no other process can take it between its choice
 * and workerd's bind, as one could when a port found free was closed for workerd to bind again
 * (a server of a test run beside it, whose answers or refused connections the tests then got).
 */
function spawnOnSocket(host: string, port: number, config: string): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((done, reject) => {
    const server = createServer().once("error", reject);
    server.listen(port, host, () => {
      const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
      const chosen = (server.address() as AddressInfo).port;
      const child = spawn(WORKERD, ["serve", config, "--socket-fd=http=3"], { stdio: ["ignore", "inherit", "inherit", fd] });
      // In the turn that began listening: this process never polls the socket, so it accepts no
      // connection; closing its descriptor leaves workerd's copy listening.
      server.close();
      done({ child, port: chosen });
    });
  });
}

/**
 * Whether workerd reads from the socket yet (it accepts connections into the backlog before). The
 * probe is a request line workerd's own HTTP parser refuses (501), so it reaches no worker: a GET
 * was counted by rate limits and metrics as the tests' first request.
 */
function serving(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host, port }, () => socket.write("BAD\r\n\r\n"));
    socket.setTimeout(2_000, () => socket.destroy());
    socket.once("data", () => {
      socket.destroy();
      done(true);
    });
    // A refused or reset connection: "close" follows and answers.
    socket.once("error", () => undefined);
    socket.once("close", () => done(false));
  });
}

// Binding values are files the config embeds, so none needs Cap'n Proto string escaping.
// Modules are named by their paths relative to the entry, which is how they import each other;
// the entry comes first, workerd's main module.
function workerdConfig(address: string, modules: WorkerModule[], bindings: string[], { date, flags }: { date: string; flags: string[] }): string {
  const moduleList = modules.map((module) => `(name = ${JSON.stringify(module.name)}, esModule = embed ${JSON.stringify(module.name)})`);
  const textBindings = bindings.map((name) => `(name = ${JSON.stringify(name)}, text = embed ${JSON.stringify(`bindings/${name}`)})`);
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "everest", worker = .worker),
    # Outbound fetch (the data-api driver), to a gateway on this machine too.
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = ${JSON.stringify(address)}, http = (), service = "everest")],
);

const worker :Workerd.Worker = (
  modules = [${moduleList.join(", ")}],
  compatibilityDate = ${JSON.stringify(date)},
  compatibilityFlags = ${JSON.stringify(flags)},
  bindings = [${textBindings.join(", ")}],
  globalOutbound = "internet",
);
`;
}

const exited = (child: ChildProcess) =>
  new Promise<number>((done) => (child.exitCode !== null ? done(child.exitCode) : child.once("exit", (code) => done(code ?? 1))));

async function waitUntilServing(child: ChildProcess, host: string, port: number): Promise<void> {
  const deadline = Date.now() + STARTUP_LIMIT_MS;
  while (!(await serving(host, port))) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`workerd exited (${child.signalCode ?? child.exitCode}) before it served`);
    if (Date.now() > deadline) throw new Error(`workerd did not serve on ${host}:${port} within ${STARTUP_LIMIT_MS / 1000}s`);
    await new Promise((wait) => setTimeout(wait, 50));
  }
}

async function main(): Promise<void> {
  const args = parseServeArgs(process.argv.slice(2));
  if (!args) return;
  const dir = await mkdtemp(join(tmpdir(), "everest-workerd-"));
  // Removed as the process exits, whichever way: under `--db d1:` miniflare's own SIGTERM handler
  // (exit-hook) ends the process before an awaited cleanup in stop() would get to run.
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  process.once("exit", removeDir);
  let child: ChildProcess | undefined;
  let stopping = false;
  let disposeD1: (() => Promise<void>) | undefined;
  // Once: a signal stops workerd, whose exit would ask again.
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    child?.kill("SIGTERM");
    // workerd read its config and modules when it started. It drains without a limit, and a
    // live-feed subscriber that went away is noticed only at its next heartbeat (docs/feed.md),
    // so it gets a second; whoever stops us may not wait even that (the harness SIGKILLs at 5 s).
    if (!disposeD1) removeDir();
    const force = child && setTimeout(() => child!.kill("SIGKILL"), DRAIN_LIMIT_MS);
    if (child) await exited(child);
    clearTimeout(force);
    await disposeD1?.();
    process.exit(code);
  };
  process.once("SIGINT", () => void stop(0));
  process.once("SIGTERM", () => void stop(0));
  try {
    const modules = /\.json$/i.test(args.file) ? await workerForJsonSettings(args.file, dir) : (await buildWorker({ settingsFile: args.file, outfile: join(dir, "worker.js"), minify: false })).modules;
    const values: Record<string, string | undefined> = { ...process.env, DB_URI: args.db };
    const bindings = ENV_SETTINGS.filter((name) => values[name]);
    await mkdir(join(dir, "bindings"));
    for (const name of bindings) await writeFile(join(dir, "bindings", name), values[name]!);
    const d1 = /^d1:(.*)$/.exec(values.DB_URI ?? "");
    if (d1) {
      const { serveWithD1 } = await import("./serve-d1.ts");
      const server = await serveWithD1({
        dir,
        modules,
        bindings: Object.fromEntries(bindings.map((name) => [name, values[name]!])),
        d1Binding: d1[1] || DEFAULT_D1_BINDING,
        compatibility: await compatibility(),
        host: args.host,
        port: args.port,
      });
      disposeD1 = server.dispose;
      console.log(`everest serving ${args.file} at ${serverUrl(args.host, Number(server.url.port))}/`);
      return;
    }
    // The address is the socket's name only: workerd listens on the socket handed to it.
    const address = `${args.host.includes(":") ? `[${args.host}]` : args.host}:${args.port}`;
    await writeFile(join(dir, "config.capnp"), workerdConfig(address, modules, bindings, await compatibility()));
    const started = await spawnOnSocket(args.host, args.port, join(dir, "config.capnp"));
    child = started.child;
    const port = started.port;
    child.once("exit", (code) => void stop(code ?? 1));
    await waitUntilServing(child, args.host, port);
    console.log(`everest serving ${args.file} at ${serverUrl(args.host, port)}/`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    await stop(1);
  }
}

await main();
