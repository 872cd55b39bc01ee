// Serves a web-standard handler with node:http: streamed request and response bodies, the
// socket address passed on as env.clientIp, graceful shutdown on SIGINT/SIGTERM.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { AddressInfo } from "node:net";

export type FetchHandler = (request: Request, env?: unknown, ctx?: unknown) => Promise<Response>;

export interface ServeOptions {
  port?: number;
  host?: string;
  /** Extra env passed to the handler with every request. */
  env?: Record<string, unknown>;
  /** Runs after the server stopped accepting requests (close database connections …). */
  onShutdown?: () => Promise<void> | void;
  /** Install SIGINT/SIGTERM handlers (default true). */
  signals?: boolean;
}

export interface NodeServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

function toRequest(req: IncomingMessage, origin: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else if (value !== undefined) headers.set(key, value);
  }
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(new URL(req.url ?? "/", origin), {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>) : undefined,
    duplex: "half",
    signal,
  } as RequestInit);
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    headers[key] = key === "set-cookie" ? response.headers.getSetCookie() : value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve));
  }
  res.end();
}

export function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<NodeServer> {
  const host = options.host ?? "127.0.0.1";
  const server = createServer(async (req, res) => {
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    try {
      const origin = `http://${req.headers.host ?? host}`;
      const response = await handler(toRequest(req, origin, abort.signal), { ...options.env, clientIp: req.socket.remoteAddress ?? null });
      await writeResponse(response, res);
    } catch (error) {
      console.error("ERROR adapter failure", error);
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end('{"_status": "ERR", "_error": {"code": 500, "message": "Internal Server Error"}}');
    }
  });

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    }).then(() => options.onShutdown?.()));

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 5000, host, () => {
      const { port } = server.address() as AddressInfo;
      const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
      if (options.signals !== false) {
        const stop = () => void close().then(() => process.exit(0));
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      }
      resolve({ server, url, close });
    });
  });
}
