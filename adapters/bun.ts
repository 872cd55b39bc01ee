// Serves a web-standard handler with Bun.serve: the peer address passed on as env.clientIp,
// graceful shutdown on SIGINT/SIGTERM (adapters/server.ts).
//   import { serve } from "./adapters/bun.ts";  await serve(createHandler(settings), { port: 3000 });
// Run directly it is the `everest serve` command line (npm run serve:bun):
//   bun adapters/bun.ts serve settings.json --port 3000
import { adapterFailure, DEFAULT_HOST, DEFAULT_PORT, onSignals, openThenListen, serverUrl, shutdown, type FetchHandler, type RunningServer, type ServeOptions } from "./server.ts";
/** File access for a `file:` journal with createHandler (node:fs, which Deno and Bun have too). */
export { NodeFileAccess } from "./node-files.ts";

// The few Bun APIs used here, so the module type-checks without Bun's own declarations.
interface BunServer {
  port: number;
  requestIP(request: Request): { address: string } | null;
  stop(closeActiveConnections?: boolean): Promise<void>;
}
interface BunApi {
  argv: string[];
  serve(options: {
    port: number;
    hostname: string;
    development: boolean;
    fetch: (request: Request, server: BunServer) => Promise<Response>;
    error: (error: unknown) => Response;
  }): BunServer;
}

const bun = (): BunApi => (globalThis as unknown as { Bun: BunApi }).Bun;

/**
 * Bun hands a relative URL (`/people`) where the Host header is missing, empty or invalid.
 * Without one (HTTP/1.0) the request is for this server, as Node and Deno take it; an invalid
 * one stays relative, and the handler answers it 400.
 */
function withOrigin(request: Request, origin: string): Request {
  return request.url.startsWith("/") && !request.headers.get("host") ? new Request(origin + request.url, request) : request;
}

/** Serves the handler once its App is open (adapters/server.ts `openThenListen`). */
export function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<RunningServer> {
  return openThenListen(handler, () => listen(handler, options));
}

function listen(handler: FetchHandler, options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? DEFAULT_HOST;
  const server = bun().serve({
    port: options.port ?? DEFAULT_PORT,
    hostname: host,
    // Development mode answers a failure with Bun's error page, stack and source included.
    development: false,
    fetch: (request, server) => handler(withOrigin(request, serverUrl(host, server.port)), { ...options.env, clientIp: server.requestIP(request)?.address ?? null }),
    error: adapterFailure,
  });
  // stop() lets requests in flight finish, stop(true) cuts them.
  const close = shutdown(handler, options, { stop: () => server.stop(), force: () => void server.stop(true) });
  onSignals(options, close, (signal, stop) => process.on(signal, stop), (code) => process.exit(code));
  return Promise.resolve({ url: serverUrl(host, server.port), close });
}

// Deno and Bun set import.meta.main on the module they were started with.
if ((import.meta as ImportMeta & { main?: boolean }).main) {
  const { runServeCommand } = await import("./serve-cli.ts");
  await runServeCommand(bun().argv.slice(2), serve);
}
