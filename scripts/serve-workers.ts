// `everest serve` on workerd, the runtime of Cloudflare Workers, offline: bundles the settings
// file with scripts/build-worker.ts (an entry module and the chunks it loads on demand), writes a
// workerd config beside it listing every module and runs the workerd binary that wrangler itself
// uses. Same command line as the other runtimes:
//   node --import tsx scripts/serve-workers.ts serve <settings.json> [--port 8787] [--host 127.0.0.1] [--db …]
// --db (or $DB_URI) and $DB_NAME, $DATA_API_KEY, $DATA_API_SOURCE become text bindings, which
// the worker maps into the settings as it does a deployment's vars and secrets. With
// `--db d1:NAME` the worker runs under miniflare with a local D1 database bound as NAME
// (scripts/serve-d1.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseServeArgs } from "../adapters/serve-cli.ts";
import { serverUrl } from "../adapters/server.ts";
import { DEFAULT_D1_BINDING, ENV_SETTINGS } from "../adapters/workers.ts";
import { buildWorker, type WorkerModule } from "./build-worker.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const WORKERD = resolve(ROOT, "node_modules/.bin/workerd");
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

/** A port nothing listens on now: workerd cannot report a port it chose itself. */
function freePort(host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer().once("error", reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host, port }, () => {
      socket.destroy();
      done(true);
    }).once("error", () => done(false));
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

async function waitUntilListening(child: ChildProcess, host: string, port: number): Promise<void> {
  const deadline = Date.now() + STARTUP_LIMIT_MS;
  while (!(await accepts(host, port))) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`workerd exited (${child.signalCode ?? child.exitCode}) before it listened`);
    if (Date.now() > deadline) throw new Error(`workerd did not listen on ${host}:${port} within ${STARTUP_LIMIT_MS / 1000}s`);
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
    const { modules } = await buildWorker({ settingsFile: args.file, outfile: join(dir, "worker.js"), minify: false });
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
    const port = args.port || (await freePort(args.host));
    const address = `${args.host.includes(":") ? `[${args.host}]` : args.host}:${port}`;
    await writeFile(join(dir, "config.capnp"), workerdConfig(address, modules, bindings, await compatibility()));
    child = spawn(WORKERD, ["serve", join(dir, "config.capnp")], { stdio: ["ignore", "inherit", "inherit"] });
    child.once("exit", (code) => void stop(code ?? 1));
    await waitUntilListening(child, args.host, port);
    console.log(`everest serving ${args.file} at ${serverUrl(args.host, port)}/`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    await stop(1);
  }
}

await main();
