// Serves a web-standard handler with node:http: streamed request and response bodies, the
// socket address passed on as env.clientIp, graceful shutdown on SIGINT/SIGTERM.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { AddressInfo } from "node:net";
import { adapterFailure, DEFAULT_HOST, DEFAULT_PORT, once, serverUrl, type FetchHandler, type RunningServer, type ServeOptions } from "./server.ts";

export type { FetchHandler, ServeOptions } from "./server.ts";

export interface NodeServer extends RunningServer {
  server: Server;
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
  const host = options.host ?? DEFAULT_HOST;
  const server = createServer(async (req, res) => {
    const abort = new AbortController();
    // Only a client gone before the response is complete aborts the request: aborting every
    // finished one too cost a DOMException and an event dispatch per request.
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    try {
      const origin = `http://${req.headers.host ?? host}`;
      const response = await handler(toRequest(req, origin, abort.signal), { ...options.env, clientIp: req.socket.remoteAddress ?? null });
      await writeResponse(response, res);
    } catch (error) {
      const failure = adapterFailure(error);
      // Half a response cannot be turned into an error; a reset at least tells the client it is cut short.
      if (res.headersSent) res.destroy();
      else await writeResponse(failure, res);
    }
  });

  const close = once(() =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    }).then(() => options.onShutdown?.()),
  );

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? DEFAULT_PORT, host, () => {
      const url = serverUrl(host, (server.address() as AddressInfo).port);
      if (options.signals !== false) {
        const stop = () => void close().then(() => process.exit(0));
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      }
      resolve({ server, url, close });
    });
  });
}
