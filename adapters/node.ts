// Serves a web-standard handler with node:http: streamed request and response bodies, the
// socket address passed on as env.clientIp, graceful shutdown on SIGINT/SIGTERM
// (adapters/server.ts), and requests node's parser refuses (an unknown method, control bytes in
// a header, oversized headers) answered in the JSON error envelope instead of a bare 400 or a
// reset.
//
// The handler gets a lightweight Request (as @hono/node-server does): method, url and headers
// come straight from the IncomingMessage, and the undici Request (URL parsing, body stream,
// AbortSignal) is only built when something asks for more: the body, the signal, clone(), text() …
// The body is read straight from the IncomingMessage when the handler asks for it through
// `text()`, `json()`, `arrayBuffer()` or everest's bounded read (src/http/body.ts), with no web
// stream between. The handler is told it may answer with plain parts (src/http/known-body.ts):
// status, a header record and bytes, written with one writeHead and one res.end(); any other
// response is read through its Headers and its body streamed (adapters/node-response.ts).
import { createServer, type IncomingMessage, type Server } from "node:http";
import { Readable } from "node:stream";
import type { AddressInfo } from "node:net";
import { BodyError, READ_BODY } from "../src/http/body.ts";
import { PLAIN_RESPONSE_WANTED } from "../src/http/known-body.ts";
import { isPlainPath, unresolvedUrl } from "../src/http/plain-path.ts";
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

// Per request, the only state: where it came from, and what was built from it on demand.
interface LazyState {
  req: IncomingMessage;
  url: string;
  headers?: IncomingHeaders;
  request?: Request;
  abort?: AbortController;
  /** The body, once read directly; a Request built later gets these bytes. */
  body?: Promise<Uint8Array>;
  /** The client left before the response was complete. */
  gone: boolean;
}

const STATE = Symbol("node request");

type LazyRequest = Request & { [STATE]: LazyState };

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}

// Names node:http keeps only the first value of, where Headers joins every value with ", ":
// these are read from the raw header list instead, to answer as Headers would. (Both join
// cookies with "; "; node's array of set-cookie values goes to the real Headers.)
const NOT_JOINED_BY_NODE = new Set([
  "age", "authorization", "content-length", "content-type", "etag", "expires", "from", "host", "if-modified-since", "if-unmodified-since",
  "last-modified", "location", "max-forwards", "proxy-authorization", "referer", "retry-after", "server", "user-agent",
]);

const trimmed = (value: string) => (value.length > 0 && (value.charCodeAt(0) <= 32 || value.charCodeAt(value.length - 1) <= 32) ? value.trim() : value);

/**
 * Request headers that answer get() and has() from the IncomingMessage node:http already parsed
 * (most of what a handler asks); anything else, or any change, builds the real Headers first
 * (as @hono/node-server does). Its prototype is Headers.prototype, so `instanceof Headers` holds.
 */
class IncomingHeaders {
  #req: IncomingMessage;
  #native?: Headers;

  constructor(req: IncomingMessage) {
    this.#req = req;
  }

  get native(): Headers {
    return (this.#native ??= headersOf(this.#req));
  }

  get(name: string): string | null {
    if (this.#native) return this.#native.get(name);
    const lower = String(name).toLowerCase();
    if (!NOT_JOINED_BY_NODE.has(lower)) {
      const value = Object.hasOwn(this.#req.headers, lower) ? this.#req.headers[lower] : undefined;
      // Absent is the common answer (If-None-Match, Origin, CF-Connecting-IP …): building the
      // real Headers to say so cost more than the rest of a GET item's header reads.
      if (value === undefined) return null;
      return typeof value === "string" ? trimmed(value) : this.native.get(name);
    }
    const raw = this.#req.rawHeaders;
    let found: string | null = null;
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i]!.length === lower.length && raw[i]!.toLowerCase() === lower) found = found === null ? trimmed(raw[i + 1]!) : `${found}, ${trimmed(raw[i + 1]!)}`;
    }
    return found;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }
}
for (const name of Object.getOwnPropertyNames(Headers.prototype)) {
  if (name === "constructor" || name === "get" || name === "has") continue;
  const descriptor = Object.getOwnPropertyDescriptor(Headers.prototype, name)!;
  if (typeof descriptor.value !== "function") continue;
  const method = descriptor.value as (...args: unknown[]) => unknown;
  Object.defineProperty(IncomingHeaders.prototype, name, {
    value(this: IncomingHeaders, ...args: unknown[]) {
      return method.apply(this.native, args);
    },
    writable: true,
    configurable: true,
  });
}
Object.defineProperty(IncomingHeaders.prototype, Symbol.iterator, {
  value(this: IncomingHeaders) {
    return this.native[Symbol.iterator]();
  },
  configurable: true,
});
Object.setPrototypeOf(IncomingHeaders.prototype, Headers.prototype);

function signalOf(state: LazyState): AbortSignal {
  if (!state.abort) {
    state.abort = new AbortController();
    if (state.gone) state.abort.abort();
  }
  return state.abort.signal;
}

function materialise(state: LazyState): Request {
  if (!state.request) {
    const method = state.req.method ?? "GET";
    const hasBody = method !== "GET" && method !== "HEAD";
    state.request = new Request(state.url, {
      method,
      headers: state.headers?.native ?? headersOf(state.req),
      body: !hasBody ? undefined : state.body ? bodyStream(state.body) : (Readable.toWeb(state.req) as unknown as ReadableStream<Uint8Array>),
      duplex: "half",
      signal: signalOf(state),
    } as RequestInit);
  }
  return state.request;
}

const bodiless = (state: LazyState) => !state.request && (state.req.method === "GET" || state.req.method === "HEAD");

function bodyStream(bytes: Promise<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream({
    async start(controller) {
      controller.enqueue(await bytes);
      controller.close();
    },
  });
}

/**
 * The whole body, refused past `limit` bytes without reading on (node:http drains or closes what
 * is left once the response is sent). Null once a Request owns the stream or the body was taken.
 */
function readDirect(state: LazyState, limit: number): Promise<Uint8Array> | null {
  if (state.request || state.body) return null;
  const req = state.req;
  state.body = new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error: Error | null) => {
      req.off("data", onData).off("end", onEnd).off("error", onError);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        req.pause();
        done(new BodyError("too-large", limit));
      } else chunks.push(chunk);
    };
    const onEnd = () => done(null);
    // node:http ends a body the client abandoned (closed mid-way, broken chunks) with an error:
    // the client's fault, answered 400 as Werkzeug answers it, not a server error to log.
    const onError = () => done(new BodyError("incomplete", limit));
    req.on("data", onData).on("end", onEnd).on("error", onError);
  });
  return state.body;
}

/** The body as `Request.arrayBuffer()` would give it; the body stream once a Request exists. */
async function bodyBytes(request: LazyRequest): Promise<Uint8Array> {
  const direct = readDirect(request[STATE], Infinity);
  return direct ? await direct : new Uint8Array(await materialise(request[STATE]).arrayBuffer());
}

const DECODER = new TextDecoder();

// method, url and headers answered from the IncomingMessage; every other member of
// Request.prototype forwarded to the Request built on first use. Its prototype is
// Request.prototype, so `instanceof Request` holds.
const lazyPrototype: object = Object.create(Request.prototype, {
  method: {
    get(this: LazyRequest) {
      return this[STATE].request?.method ?? this[STATE].req.method ?? "GET";
    },
  },
  url: {
    get(this: LazyRequest) {
      return this[STATE].url;
    },
  },
  headers: {
    get(this: LazyRequest) {
      const state = this[STATE];
      return state.request?.headers ?? (state.headers ??= new IncomingHeaders(state.req));
    },
  },
  signal: {
    get(this: LazyRequest) {
      return signalOf(this[STATE]);
    },
  },
  // A GET or HEAD has none (fetch's Request says so too): asking builds nothing. An on_pre hook's
  // request is a copy only where there is a body to keep (src/events/hook-bodies.ts), and asking
  // made every GET of a resource with such a hook four times dearer.
  body: {
    get(this: LazyRequest) {
      return bodiless(this[STATE]) ? null : materialise(this[STATE]).body;
    },
  },
  bodyUsed: {
    get(this: LazyRequest) {
      return bodiless(this[STATE]) ? false : materialise(this[STATE]).bodyUsed;
    },
  },
  text: {
    async value(this: LazyRequest) {
      return DECODER.decode(await bodyBytes(this));
    },
  },
  json: {
    async value(this: LazyRequest) {
      return JSON.parse(DECODER.decode(await bodyBytes(this))) as unknown;
    },
  },
  arrayBuffer: {
    async value(this: LazyRequest) {
      const bytes = await bodyBytes(this);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    },
  },
  [READ_BODY]: {
    value(this: LazyRequest, limit: number) {
      return readDirect(this[STATE], limit);
    },
  },
  [PLAIN_RESPONSE_WANTED]: { value: true },
  [Symbol.toStringTag]: { value: "Request" },
});
for (const name of Object.getOwnPropertyNames(Request.prototype)) {
  if (name === "constructor" || Object.hasOwn(lazyPrototype, name)) continue;
  const descriptor = Object.getOwnPropertyDescriptor(Request.prototype, name)!;
  if (typeof descriptor.value === "function") {
    const method = descriptor.value as (...args: unknown[]) => unknown;
    Object.defineProperty(lazyPrototype, name, {
      value(this: LazyRequest, ...args: unknown[]) {
        return method.apply(materialise(this[STATE]), args);
      },
      writable: true,
      configurable: true,
    });
  } else if (descriptor.get) {
    Object.defineProperty(lazyPrototype, name, {
      get(this: LazyRequest) {
        return (materialise(this[STATE]) as unknown as Record<string, unknown>)[name];
      },
      configurable: true,
    });
  }
}

// The origin of each Host header seen, as URL normalises it (case, default port); a few hosts
// at most, so a small cache that is simply dropped when it fills.
const origins = new Map<string, string>();

/** The origin a Host header names; null when it names none (`a b`, `x:99999`): the request is a 400. */
function originOf(host: string): string | null {
  let origin = origins.get(host);
  if (origin === undefined) {
    const url = URL.parse(`http://${host}`);
    if (!url) return null;
    origin = url.origin;
    if (origins.size >= 64) origins.clear();
    origins.set(host, origin);
  }
  return origin;
}

// A path (src/http/plain-path.ts) and query URL would keep as they are. Anything else goes
// through URL, as every target did before.
const PLAIN_QUERY = /^[\w\-.~!$&()*+,;=:@%/?[\]|^]*$/;

function isPlainTarget(target: string): boolean {
  const q = target.indexOf("?");
  const path = q < 0 ? target : target.slice(0, q);
  return isPlainPath(path) && (q < 0 || PLAIN_QUERY.test(target.slice(q + 1)));
}

function urlOf(req: IncomingMessage, host: string): string | null {
  const target = req.url ?? "/";
  const origin = originOf(req.headers.host ?? host);
  if (origin === null) return null;
  if (isPlainTarget(target)) return origin + target;
  const unresolved = unresolvedUrl(origin, target);
  if (unresolved !== null) return unresolved;
  // `//x/people` is a path: resolved against the origin, URL would read x as a host and serve /people.
  const url = target.startsWith("//") ? URL.parse(origin + target) : URL.parse(target, origin);
  return url?.href ?? null;
}

/** The request, or null when its Host header or target makes no URL. */
function toRequest(req: IncomingMessage, host: string): LazyRequest | null {
  const url = urlOf(req, host);
  if (url === null) return null;
  const request = Object.create(lazyPrototype) as LazyRequest;
  request[STATE] = { req, url, gone: false };
  return request;
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
      const state = request[STATE];
      state.gone = true;
      state.abort?.abort();
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
