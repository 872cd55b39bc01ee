// Serves a web-standard handler with node:http: streamed request and response bodies, the
// socket address passed on as env.clientIp, graceful shutdown on SIGINT/SIGTERM
// (adapters/server.ts), and requests node's parser refuses (an unknown method, control bytes in
// a header, oversized headers) answered in the JSON error envelope instead of a bare 400 or a
// reset.
//
// The handler gets a lightweight Request (adapters/node-request.ts, as @hono/node-server does),
// and is told it may answer with plain parts (src/http/known-body.ts): status, a header record
// and bytes, written with one writeHead and one res.end(); any other response is read through
// its Headers and its body streamed (adapters/node-response.ts).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { clientGone, toRequest, type LazyRequest } from "./node-request.ts";
import { MAX_HEADER_SIZE, refuse } from "./node-refusal.ts";
import { writeResponse } from "./node-response.ts";
import { adapterFailure, DEFAULT_HOST, DEFAULT_PORT, onSignals, serverUrl, shutdown, unreadableRequestResponse, type FetchHandler, type RunningServer, type ServeOptions } from "./server.ts";
/** File access for a `file:` journal with createHandler (node:fs, which Deno and Bun have too). */
export { NodeFileAccess } from "./node-files.ts";

export type { FetchHandler, ServeOptions } from "./server.ts";
export { MAX_HEADER_SIZE } from "./node-refusal.ts";

export interface NodeServer extends RunningServer {
  server: Server;
}

export function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<NodeServer> {
  const host = options.host ?? DEFAULT_HOST;
  const server = createServer({ maxHeaderSize: MAX_HEADER_SIZE }, async (req, res) => {
    let request: LazyRequest | undefined;
    // Only a client gone before the response is complete aborts the request: aborting every
    // finished one too cost a DOMException and an event dispatch per request. No signal is
    // made unless the handler asks for one.
    res.on("close", () => {
      if (res.writableFinished || !request) return;
      clientGone(request);
    });
    try {
      request = toRequest(req, host) ?? undefined;
      if (!request) return void (await writeResponse(unreadableRequestResponse(), res));
      const response = await handler(request, { ...options.env, clientIp: req.socket.remoteAddress ?? null });
      // Once shutdown began, a keep-alive connection is closed after its answer, so it ends
      // now rather than after keepAliveTimeout. node:http closes it once that answer is sent,
      // after the answers queued before it (pipelined requests answer in order).
      const closesAfter = closing;
      if (closesAfter) res.shouldKeepAlive = false;
      const writing = writeResponse(response, res);
      if (writing) await writing;
      // A response begun before shutdown that ends during it (a change stream's final event)
      // would leave its connection open until keep-alive times it out: it is ended now. Ending
      // the socket after every answer lost the answers still queued: a stored POST's 201.
      if (closing && !closesAfter) req.socket.end();
    } catch (error) {
      const failure = adapterFailure(error);
      // Half a response cannot be turned into an error; a reset at least tells the client it is cut short.
      if (res.headersSent) res.destroy();
      else await writeResponse(failure, res);
    }
  });

  // What node's HTTP parser refuses never reaches the handler: answered here in the same envelope.
  server.on("clientError", refuse);

  let closing = false;
  const close = shutdown(handler, options, {
    stop: () => {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      return closed;
    },
    force: () => server.closeAllConnections(),
  });

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? DEFAULT_PORT, host, () => {
      const url = serverUrl(host, (server.address() as AddressInfo).port);
      onSignals(options, close, (signal, stop) => process.on(signal, stop), (code) => process.exit(code));
      resolve({ server, url, close });
    });
  });
}
