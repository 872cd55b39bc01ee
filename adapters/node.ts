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
import { createServer, type IncomingMessage, type Server } from "node:http";
import { Server as NetServer, type AddressInfo, type Socket } from "node:net";
import { clientGone, toRequest, type LazyRequest } from "./node-request.ts";
import { MAX_HEADER_SIZE, refuse } from "./node-refusal.ts";
import { writeResponse } from "./node-response.ts";
import { adapterFailure, DEFAULT_HOST, DEFAULT_PORT, onSignals, openThenListen, serverUrl, shutdown, unreadableRequestResponse, type FetchHandler, type RunningServer, type ServeOptions } from "./server.ts";
/** File access for a `file:` journal with createHandler (node:fs, which Deno and Bun have too). */
export { NodeFileAccess } from "./node-files.ts";

export type { FetchHandler, ServeOptions } from "./server.ts";
export { MAX_HEADER_SIZE } from "./node-refusal.ts";

export interface NodeServer extends RunningServer {
  server: Server;
}

/** Requests of a connection not yet answered in full: node:http hands on pipelined ones at once. */
const IN_FLIGHT = Symbol("requests in flight");
/**
 * The answer to what node's parser refused after requests still in flight: written once no more
 * than `after` are (the request whose body the error is in, if any, can never be answered).
 */
const REFUSAL = Symbol("refusal after the answers");
/** The connection's last request handed on: the parser's error is in its body while it is incomplete. */
const LAST = Symbol("last request");
type Carrying = Socket & { [IN_FLIGHT]?: number; [REFUSAL]?: { after: number; send(): void }; [LAST]?: IncomingMessage };

/** Whether node:http may still have requests of this connection to parse: bytes read but not parsed, or reading paused. */
const holdsUnread = (socket: Socket): boolean => socket.readableLength > 0 || socket.isPaused();

/**
 * Ends a connection during shutdown once it has no request in flight and node:http holds none
 * unread. A parser paused for a client that stopped reading resumes only when the answers drain,
 * and the requests behind it then reach the handler a turn of the event loop later: ended at
 * once, those were carried out (a POST stored) with their answers lost. Two turns give the socket
 * a poll; a connection that never goes idle is closed by the shutdown's time limit.
 */
function endWhenIdle(socket: Carrying): void {
  setImmediate(() =>
    setImmediate(() => {
      if (socket.destroyed || socket[IN_FLIGHT]! > 0) return;
      if (holdsUnread(socket)) setTimeout(endWhenIdle, 10, socket);
      else socket.end();
    }),
  );
}

/** Serves the handler once its App is open (adapters/server.ts `openThenListen`). */
export function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<NodeServer> {
  return openThenListen(handler, () => listen(handler, options));
}

function listen(handler: FetchHandler, options: ServeOptions): Promise<NodeServer> {
  const host = options.host ?? DEFAULT_HOST;
  const server = createServer({ maxHeaderSize: MAX_HEADER_SIZE }, async (req, res) => {
    let request: LazyRequest | undefined;
    const socket = req.socket as Carrying;
    socket[IN_FLIGHT] = (socket[IN_FLIGHT] ?? 0) + 1;
    socket[LAST] = req;
    res.on("close", () => {
      // During shutdown a connection ends once its last answer is sent: an answer begun before
      // (a change stream's final event) would otherwise hold it until keep-alive times it out,
      // and ending it after any answer lost those of the requests pipelined behind (a stored POST's 201).
      const left = --socket[IN_FLIGHT]!;
      const refusal = socket[REFUSAL];
      if (refusal && left <= refusal.after) {
        socket[REFUSAL] = undefined;
        refusal.send();
      } else if (left === 0 && closing) endWhenIdle(socket);
      // Only a client gone before the response is complete aborts the request: aborting every
      // finished one too cost a DOMException and an event dispatch per request. No signal is
      // made unless the handler asks for one.
      if (res.writableFinished || !request) return;
      clientGone(request);
    });
    try {
      request = toRequest(req, host) ?? undefined;
      if (!request) return void (await writeResponse(unreadableRequestResponse(), res));
      const response = await handler(request, { ...options.env, clientIp: req.socket.remoteAddress ?? null });
      // Once shutdown began, the last request of a keep-alive connection tells the client it
      // closes (node:http then ends it after this answer, and after those queued before it);
      // one with requests pipelined behind it leaves that to theirs.
      if (closing && socket[IN_FLIGHT] === 1 && !holdsUnread(socket)) res.shouldKeepAlive = false;
      const writing = writeResponse(response, res);
      if (writing) await writing;
    } catch (error) {
      const failure = adapterFailure(error);
      // Half a response cannot be turned into an error; a reset at least tells the client it is cut short.
      if (res.headersSent) res.destroy();
      else await writeResponse(failure, res);
    }
  });

  // What node's HTTP parser refuses never reaches the handler: answered here in the same envelope,
  // after the answers to the requests before it on the connection (written first, the refusal
  // ended the connection under them: a stored POST's 201 was lost).
  // An error inside a request's own body leaves that request waiting for a body that never comes:
  // the refusal is its answer, after those of the requests before it.
  server.on("clientError", (error: Error, socket: Carrying) => {
    const inFlight = socket[IN_FLIGHT] ?? 0;
    const after = inFlight > 0 && !socket[LAST]!.complete ? 1 : 0;
    if (inFlight > after) socket[REFUSAL] = { after, send: () => refuse(error, socket) };
    else refuse(error, socket);
  });

  // The connections open, for the drain: node:http's own closing of idle ones (which
  // server.close() does too) destroys a connection between two requests even while answers sit
  // unsent in its buffer for a client that reads slowly, and requests behind them unparsed.
  const sockets = new Set<Carrying>();
  server.on("connection", (socket: Carrying) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  let closing = false;
  const close = shutdown(handler, options, {
    stop: () => {
      closing = true;
      // net.Server's close: no new connection, and none of node:http's closing of idle ones.
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      for (const socket of sockets) if (!socket[IN_FLIGHT]) endWhenIdle(socket);
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
