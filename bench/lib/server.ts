// The server entry every HTTP bench runs as a child process, unchanged on Node, Bun and Deno:
//   server.ts floor                      answers /<size> with a body of that size, made once per size
//   … floor --spin US                    after spending US µs of CPU on each request first: a handler
//                                        of known cost, to see what else a slower one costs (probe.ts)
//   server.ts hand   --documents 10000   the hand-written Hono + mingo + bson equivalent
//   server.ts lean   --documents 10000   the lean hand-written one (values stored as served, plain JSON.stringify)
//   server.ts everest --documents 10000  createHandler(settings) on the memory driver
//   … --db sqlite:PATH | file:PATH       everest on another store (DB_URI), for bench --db
//   … --dist DIR                         everest from another build of the package (lib/side-by-side.ts)
//   … --feed                            everest with CHANGE_FEED on (bench/feed.ts)
//   … --adapter hono|everest             on Node: which server adapter; by default everest's for
//                                        everest and @hono/node-server for the equivalents, the one
//                                        their developer would use (bench/adapters.ts compares them)
//   … --profile PATH                     a CPU profile between two SIGHUPs, written to PATH at the
//                                        second (the server under load, the seeding left out)
// It prints `READY <port>` once it listens on 127.0.0.1 (on a port of the system's choosing), and
// on SIGUSR2 collects all its garbage and prints `HEAP <bytes>`, the live heap (memory.ts's leak check).
// Each kind imports only what it needs, so the baselines still run while everest cannot.
import process from "node:process";
import v8 from "node:v8";
import vm from "node:vm";
import { builtEverest } from "./package.ts";

type Fetch = (request: Request, env?: unknown) => Promise<Response> | Response;

interface BunRuntime {
  serve(options: { port: number; hostname: string; fetch: Fetch }): { port: number };
}
interface DenoRuntime {
  serve(options: { port: number; hostname: string; onListen?: () => void }, handler: Fetch): { addr: { port: number } };
}

const HOST = "127.0.0.1";
const runtime = globalThis as { Bun?: BunRuntime; Deno?: DenoRuntime };

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}

/** The build everest is served from: --dist's directory, or the package's own dist/. */
const distOption = () => {
  const dist = option("dist", "");
  return dist ? dist.replace(/\/?$/, "/") : undefined;
};

/**
 * A full collection: Bun's own call, and V8's gc() on Node and Deno, reachable without starting
 * the runtime with a flag once the flag is set (so the measured servers run as they otherwise would).
 */
function collector(): () => void {
  const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
  if (bun) return () => bun.gc(true);
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

function profileOnSignal(path: string): void {
  let session: Promise<{ stop(path: string): Promise<void> }> | null = null;
  process.on("SIGHUP", () => {
    if (!session) session = import("./profile.ts").then(({ startProfile }) => startProfile());
    else {
      const stopping = session;
      session = null;
      void stopping.then((running) => running.stop(path)).then(() => process.stdout.write(`PROFILED ${path}\n`));
    }
  });
}

function reportHeapOnSignal(): void {
  let collect: (() => void) | null = null;
  process.on("SIGUSR2", () => {
    (collect ??= collector())();
    process.stdout.write(`HEAP ${process.memoryUsage().heapUsed}\n`);
  });
}

/** Serves a fetch handler with the runtime's own server (Node: the adapter chosen for the kind). */
async function listen(fetch: Fetch, kind: string): Promise<number> {
  if (runtime.Bun) return runtime.Bun.serve({ port: 0, hostname: HOST, fetch }).port;
  if (runtime.Deno) return runtime.Deno.serve({ port: 0, hostname: HOST, onListen() {} }, fetch).addr.port;
  if (option("adapter", kind === "everest" ? "everest" : "hono") === "hono") {
    const { serve } = await import("@hono/node-server");
    // The bindings ({ incoming, outgoing }) handed on: the lean server reads node's parsed headers there.
    return new Promise((resolve) => {
      serve({ fetch: (request, env) => fetch(request, env), port: 0, hostname: HOST }, (info) => resolve(info.port));
    });
  }
  const { serve } = await builtEverest(distOption());
  // The env too (the client's address), as serve() hands it to any handler.
  const server = await serve(async (request, env) => fetch(request, env), { port: 0, host: HOST, signals: false });
  return Number(new URL(server.url).port);
}

/** The floor: no routing, parsing or rendering; request bodies are read, responses are bytes made once per size. */
async function floor(): Promise<number> {
  const spinMs = Number(option("spin", "0")) / 1000;
  const bodies = new Map<string, Uint8Array<ArrayBuffer>>();
  const body = (path: string) => {
    for (const start = performance.now(); performance.now() - start < spinMs; );
    let bytes = bodies.get(path);
    if (!bytes) bodies.set(path, (bytes = new Uint8Array(Number(path.slice(1)) || 0).fill(0x20)));
    return bytes;
  };
  if (runtime.Bun || runtime.Deno) {
    return listen(async (request) => {
      if (request.body) await request.arrayBuffer();
      return new Response(body(new URL(request.url).pathname), { headers: { "Content-Type": "application/json" } });
    }, "floor");
  }
  const { createServer } = await import("node:http");
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const bytes = body(req.url ?? "/");
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": bytes.byteLength });
      res.end(bytes);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return (server.address() as { port: number }).port;
}

async function main(): Promise<void> {
  const kind = process.argv[2];
  const documents = Number(option("documents", "10000"));
  const { seed, settings } = await import("./people.ts");
  let port: number;
  if (kind === "floor") {
    port = await floor();
  } else if (kind === "hand") {
    const { handWritten } = await import("./hand.ts");
    const app = handWritten();
    await seed(app.fetch, "http://bench.local", documents);
    port = await listen(app.fetch, kind);
  } else if (kind === "lean") {
    const { leanHandWritten } = await import("./lean.ts");
    const app = leanHandWritten();
    await seed(app.fetch, "http://bench.local", documents);
    port = await listen(app.fetch, kind);
  } else if (kind === "everest") {
    const { createHandler, NodeFileAccess } = await builtEverest(distOption());
    const db = option("db", "");
    const feed = process.argv.includes("--feed") ? { CHANGE_FEED: true, CHANGE_FEED_MAX_STREAMS: 1_000_000 } : {};
    const handler = createHandler({ ...settings, ...feed, ...(db ? { DB_URI: db } : {}) }, { services: { files: new NodeFileAccess() } });
    await seed(handler, "http://bench.local", documents);
    port = await listen(handler, kind);
  } else {
    throw new Error(`unknown server kind '${kind}' (floor, hand, lean or everest)`);
  }
  reportHeapOnSignal();
  const profile = option("profile", "");
  if (profile) profileOnSignal(profile);
  process.stdout.write(`READY ${port}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
