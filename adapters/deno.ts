// Serves a web-standard handler with Deno.serve: the peer address passed on as env.clientIp,
// graceful shutdown on SIGINT/SIGTERM.
//   import { serve } from "./adapters/deno.ts";  await serve(createHandler(settings), { port: 8000 });
// Run directly it is the `everest serve` command line (deno task start, npm run serve:deno):
//   deno run --allow-net --allow-read --allow-env adapters/deno.ts serve settings.json --port 8000
// With a journal (--db file:PATH) add --allow-write, and --allow-run so that a lock left by a
// killed server can be told from a live one's (adapters/node-files.ts); without it such a lock
// refuses the start until deleted.
import { adapterFailure, DEFAULT_HOST, DEFAULT_PORT, once, serverUrl, type FetchHandler, type RunningServer, type ServeOptions } from "./server.ts";

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

export function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<RunningServer> {
  const Deno = deno();
  const host = options.host ?? DEFAULT_HOST;
  const server = Deno.serve(
    // onListen replaces Deno's own "Listening on …" line; the command line prints its own.
    { port: options.port ?? DEFAULT_PORT, hostname: host, onListen() {}, onError: adapterFailure },
    (request, info) => handler(request, { ...options.env, clientIp: info.remoteAddr.hostname ?? null }),
  );
  const close = once(async () => {
    options.onClosing?.();
    await server.shutdown();
    await options.onShutdown?.();
  });
  if (options.signals !== false) {
    const stop = () => void close().then(() => Deno.exit(0));
    Deno.addSignalListener("SIGINT", stop);
    // Windows has no SIGTERM to listen for.
    if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", stop);
  }
  return Promise.resolve({ url: serverUrl(host, server.addr.port), close });
}

// Deno and Bun set import.meta.main on the module they were started with.
if ((import.meta as ImportMeta & { main?: boolean }).main) {
  const { runServeCommand } = await import("./serve-cli.ts");
  await runServeCommand(deno().args, serve);
}
