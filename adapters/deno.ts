// Serves a web-standard handler with Deno.serve: the peer address passed on as env.clientIp,
// graceful shutdown on SIGINT/SIGTERM (adapters/server.ts).
//   import { serve } from "./adapters/deno.ts";  await serve(createHandler(settings), { port: 8000 });
// Run directly it is the `everest serve` command line (deno task start, npm run serve:deno):
//   deno run --allow-net --allow-read --allow-env adapters/deno.ts serve settings.json --port 8000
// With a journal (--db file:PATH) add --allow-write; its lock is a flock (adapters/kernel-lock.ts).
// --allow-run only checks a holder of another runtime that has no beacon (adapters/lock-beacon.ts).
import { adapterFailure, DEFAULT_HOST, DEFAULT_PORT, onSignals, openThenListen, serverUrl, shutdown, shuttingDownResponse, type FetchHandler, type RunningServer, type ServeOptions } from "./server.ts";
/** File access for a `file:` journal with createHandler (node:fs, which Deno and Bun have too). */
export { NodeFileAccess } from "./node-files.ts";

// The few Deno APIs used here, so the module type-checks without Deno's own declarations.
interface DenoServeInfo {
  remoteAddr: { transport: string; hostname?: string };
}
interface DenoHttpServer {
  addr: { port: number };
  shutdown(): Promise<void>;
}
interface DenoApi {
  args: string[];
  serve(
    options: { port: number; hostname: string; onListen?: () => void; onError?: (error: unknown) => Response },
    handler: (request: Request, info: DenoServeInfo) => Promise<Response>,
  ): DenoHttpServer;
  addSignalListener(signal: "SIGINT" | "SIGTERM", listener: () => void): void;
  exit(code?: number): never;
  build: { os: string };
}

const deno = (): DenoApi => (globalThis as unknown as { Deno: DenoApi }).Deno;

/** Serves the handler once its App is open (adapters/server.ts `openThenListen`). */
export function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<RunningServer> {
  return openThenListen(handler, () => listen(handler, options));
}

function listen(handler: FetchHandler, options: ServeOptions): Promise<RunningServer> {
  const Deno = deno();
  const host = options.host ?? DEFAULT_HOST;
  // Deno 2.9's shutdown() makes the bodies of requests in flight unreadable at once
  // (denoland/deno#36809): shutdown waits until the requests this adapter took are answered, and
  // meanwhile answers new ones 503 and closes their connections, which stops them in effect.
  let stopping = false;
  let active = 0;
  let idle: (() => void) | undefined;
  const server = Deno.serve(
    // onListen replaces Deno's own "Listening on …" line; the command line prints its own.
    { port: options.port ?? DEFAULT_PORT, hostname: host, onListen() {}, onError: adapterFailure },
    async (request, info) => {
      if (stopping) return shuttingDownResponse();
      active++;
      try {
        return await handler(request, { ...options.env, clientIp: info.remoteAddr.hostname ?? null });
      } finally {
        if (--active === 0) idle?.();
      }
    },
  );
  const stop = async () => {
    stopping = true;
    if (active > 0) await new Promise<void>((resolve) => (idle = resolve));
    await server.shutdown();
  };
  // Deno has no way to cut connections short; the process exits after.
  const close = shutdown(handler, options, { stop, force: () => undefined });
  onSignals(
    options,
    close,
    // Windows has no SIGTERM to listen for.
    (signal, stop) => (signal === "SIGINT" || Deno.build.os !== "windows") && Deno.addSignalListener(signal, stop),
    (code) => Deno.exit(code),
  );
  return Promise.resolve({ url: serverUrl(host, server.addr.port), close });
}

// Deno and Bun set import.meta.main on the module they were started with.
if ((import.meta as ImportMeta & { main?: boolean }).main) {
  const { runServeCommand } = await import("./serve-cli.ts");
  await runServeCommand(deno().args, serve);
}
