// The HTTP-level suite against a real server (npm run test:runtimes): with EVEREST_TEST_RUNTIME
// set to node, deno, bun or workers, every testApi(settings) writes its settings to a JSON file,
// starts `npm run serve:<runtime>`'s command on it (read from package.json, so the tests run
// exactly what users run) on a port of the system's choosing, and sends each request over HTTP
// with the Host the in-process API sees, so absolute URLs in answers are the same. One server
// per testApi call keeps each API's data its own, as in-process.
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { join } from "node:path";
import { Readable } from "node:stream";
import { isDeepStrictEqual } from "node:util";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import type { HandlerOptions } from "../../src/app.ts";
import type { Handler } from "../../src/handler.ts";
import type { Settings } from "../../src/settings/types.ts";
import { READY_LINE, RUNTIMES, serveCommand, type Runtime } from "../../scripts/serve-command.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const STARTUP_LIMIT_MS = 45_000;
const STOP_LIMIT_MS = 5_000;
const IN_PROCESS_ONLY = "test/runtimes/in-process-only.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Where servers record their process group, so the global teardown can stop leftovers. */
    runtimeServersDir: string;
  }
}

export interface RemoteApi {
  fetch(path: string, init?: RequestInit): Promise<Response>;
  readonly handler: Handler;
  close(): Promise<void>;
}

function checkedRuntime(name: string): Runtime {
  if (!(RUNTIMES as readonly string[]).includes(name)) throw new Error(`EVEREST_TEST_RUNTIME: '${name}' is not one of ${RUNTIMES.join(", ")}`);
  const db = process.env.EVEREST_TEST_DB;
  if (db && db !== "memory" && db !== "sqlite") throw new Error(`EVEREST_TEST_RUNTIME runs servers on their memory or sqlite driver; EVEREST_TEST_DB=${db} needs the in-process API`);
  return name as Runtime;
}

/** Settings a server can be given: plain JSON data, nothing that JSON would drop or change. */
function serialised(settings: Settings): string {
  const text = JSON.stringify(settings);
  if (!isDeepStrictEqual(JSON.parse(text), settings)) {
    throw new Error(`these settings hold more than JSON (functions, classes, undefined …) and cannot be sent to a server; list the test file in ${IN_PROCESS_ONLY}`);
  }
  return text;
}

const live = new Set<Server>();
let count = 0;

class Server {
  private child?: ChildProcess;
  private output = "";
  readonly ready: Promise<URL>;

  constructor(
    private readonly runtime: Runtime,
    private readonly settingsFile: string,
    private readonly pidFile: string,
    /** `--db`, when the server is not to use the settings' own database. */
    private readonly db?: string,
  ) {
    this.ready = this.start();
    // A server no test got to use may fail unobserved; the tests that use it see the failure.
    this.ready.catch(() => undefined);
  }

  private start(): Promise<URL> {
    const [program, ...args] = serveCommand(this.runtime);
    // Its own process group, so stopping it stops what it started too (tsx's node, workerd).
    const child = spawn(program!, [...args, this.settingsFile, "--port", "0", ...(this.db ? ["--db", this.db] : [])], { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    writeFileSync(this.pidFile, String(child.pid));
    const keep = (chunk: string) => (this.output = (this.output + chunk).slice(-8000));
    child.stderr!.setEncoding("utf8").on("data", keep);
    child.stdout!.setEncoding("utf8").on("data", keep);
    return new Promise((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        void this.stop();
        reject(new Error(`serve:${this.runtime} ${why}\n${this.output.trim()}`));
      };
      const timer = setTimeout(() => fail(`did not start within ${STARTUP_LIMIT_MS / 1000}s`), STARTUP_LIMIT_MS);
      child.once("exit", (code, signal) => fail(`exited (${signal ?? code}) before it was ready`));
      child.once("error", (error) => fail(`could not be started: ${error.message}`));
      const onOutput = () => {
        const url = READY_LINE.exec(this.output)?.[1];
        if (!url) return;
        clearTimeout(timer);
        child.removeAllListeners("exit").removeAllListeners("error");
        child.stdout!.off("data", onOutput);
        resolve(new URL(url));
      };
      child.stdout!.on("data", onOutput);
    });
  }

  /** SIGTERM to the group, SIGKILL if it has not exited in time. */
  async stop(): Promise<void> {
    live.delete(this);
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return void rmSync(this.pidFile, { force: true });
    const exited = new Promise<boolean>((resolve) => child.once("exit", () => resolve(true)));
    signalGroup(child.pid, "SIGTERM");
    const timer = setTimeout(() => signalGroup(child.pid!, "SIGKILL"), STOP_LIMIT_MS);
    // A process that outlives SIGKILL (the kernel holding it in I/O) is left to the global
    // teardown, which kills what the pid files name, rather than failing the test that stops it.
    let giveUp: ReturnType<typeof setTimeout> | undefined;
    const outlived = new Promise<boolean>((resolve) => (giveUp = setTimeout(() => resolve(false), 2 * STOP_LIMIT_MS)));
    if (await Promise.race([exited, outlived])) rmSync(this.pidFile, { force: true });
    else console.warn(`serve:${this.runtime} (pid ${child.pid}) did not exit ${(2 * STOP_LIMIT_MS) / 1000}s after SIGTERM\n${this.output.trim()}`);
    clearTimeout(timer);
    clearTimeout(giveUp);
  }
}

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** Stops every server this test file started (the runtime setup file calls it after each file). */
export async function stopRuntimeServers(): Promise<void> {
  await Promise.all([...live].map((server) => server.stop()));
}

/** Sends a request with node:http, which (unlike fetch) lets the Host header through. */
async function send(base: URL, agent: Agent, request: Request, streamed: boolean): Promise<Response> {
  const headers: Record<string, string | string[]> = {};
  request.headers.forEach((value, name) => (headers[name] = value));
  headers.host ??= new URL(request.url).host;
  // A declared length is sent as such; a stream goes chunked, as fetch would send them.
  const body = request.body && !streamed ? new Uint8Array(await request.arrayBuffer()) : null;
  if (body) headers["content-length"] = String(body.byteLength);
  const url = new URL(request.url);
  return exchange(base, agent, request, url, headers, body, true);
}

function exchange(base: URL, agent: Agent, request: Request, url: URL, headers: Record<string, string | string[]>, body: Uint8Array | null, retry: boolean): Promise<Response> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: base.hostname, port: base.port, method: request.method, path: url.pathname + url.search, headers, agent }, (incoming) => {
      const responseHeaders = new Headers();
      for (let i = 0; i < incoming.rawHeaders.length; i += 2) responseHeaders.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!);
      const status = incoming.statusCode!;
      const empty = request.method === "HEAD" || status === 204 || status === 304;
      const init = { status, statusText: incoming.statusMessage, headers: responseHeaders };
      // An event stream is handed on as it arrives (cancelling it closes the connection, as a
      // client going away does); any other body once complete, as before.
      if (!empty && (incoming.headers["content-type"] ?? "").startsWith("text/event-stream")) {
        resolve(new Response(Readable.toWeb(incoming) as ReadableStream<Uint8Array>, init));
        return;
      }
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.once("error", reject);
      incoming.once("end", () => resolve(new Response(empty ? null : Buffer.concat(chunks), init)));
    });
    outgoing.once("error", (error: NodeJS.ErrnoException) => {
      // A kept-alive connection the server closed just as it was reused (miniflare closes one
      // whose request body a response left unread): sent again on a fresh one, as Node's
      // documentation advises; a streamed body cannot be sent twice.
      if (retry && outgoing.reusedSocket && error.code === "ECONNRESET" && (body || !request.body)) resolve(exchange(base, agent, request, url, headers, body, false));
      else reject(error);
    });
    if (body) outgoing.end(body);
    else if (!request.body) outgoing.end();
    else {
      void (async () => {
        try {
          for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) if (!outgoing.write(chunk)) await new Promise((r) => outgoing.once("drain", r));
          outgoing.end();
        } catch (error) {
          outgoing.destroy(error as Error);
        }
      })();
    }
  });
}

/** Where settings that hold code come from (test/support/api.ts moduleSettings). */
export interface SettingsModule {
  /** The module that default-exports them. */
  path: string;
  /** Plain settings the test puts over them. */
  overrides: Settings;
}

/** A settings module of its own for the server: the given one's settings with the test's overrides. */
function moduleWrapper(module: SettingsModule): string {
  const defaults: Settings = { DB_URI: "memory" };
  return [`import base from ${JSON.stringify(module.path)};`, `export default { ...${JSON.stringify(defaults)}, ...base, ...${serialised(module.overrides)} };`, ""].join("\n");
}

export function runtimeApi(runtimeName: string, origin: string, settings: Settings, options?: HandlerOptions, module?: SettingsModule): RemoteApi {
  const runtime = checkedRuntime(runtimeName);
  if (options && Object.keys(options).length > 0) {
    throw new Error(`testApi(settings, options): options live in this process and cannot be given to a server; list the test file in ${IN_PROCESS_ONLY}`);
  }
  const dir = inject("runtimeServersDir");
  const name = `${process.pid}-${++count}`;
  const settingsFile = join(dir, module ? `${name}.mjs` : `${name}.json`);
  writeFileSync(settingsFile, module ? moduleWrapper(module) : serialised(settings));
  // Started now rather than at the first request, so it boots while earlier tests run.
  // EVEREST_TEST_DB=sqlite: a file of its own on Node, Deno and Bun, a D1 database on workerd.
  const db = process.env.EVEREST_TEST_DB === "sqlite" ? (runtime === "workers" ? "d1:DB" : `sqlite:${join(dir, `${name}.db`)}`) : undefined;
  const server = new Server(runtime, settingsFile, join(dir, "pids", name), db);
  live.add(server);
  const agent = new Agent({ keepAlive: true });
  return {
    async fetch(path, init) {
      const base = await server.ready;
      const streamed = init?.body instanceof ReadableStream;
      return send(base, agent, new Request(origin + path, init), streamed);
    },
    get handler(): Handler {
      throw new Error(`api.handler: the API runs on ${runtime} in another process; list the test file in ${IN_PROCESS_ONLY}`);
    },
    async close() {
      agent.destroy();
      await server.stop();
      rmSync(settingsFile, { force: true });
    },
  };
}
