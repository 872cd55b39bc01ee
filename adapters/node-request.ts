// The lightweight Request node's adapter hands the handler (adapters/node.ts): method, url and
// headers come straight from the IncomingMessage, and the undici Request (URL parsing, body
// stream, AbortSignal) is only built when something asks for more: the signal, formData() …
// The body is read straight from the IncomingMessage when the handler asks for it through
// `text()`, `json()`, `arrayBuffer()` or everest's bounded read (src/http/body.ts), with no web
// stream between.
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { BodyError, LIMIT_BODY, READ_BODY } from "../src/http/body.ts";
import { PLAIN_RESPONSE_WANTED } from "../src/http/known-body.ts";
import { isPlainPath, unresolvedUrl } from "../src/http/plain-path.ts";
import { headersOf, IncomingHeaders } from "./node-headers.ts";

// Per request, the only state: where it came from, and what was built from it on demand.
interface LazyState {
  req: IncomingMessage;
  url: string;
  headers?: IncomingHeaders;
  request?: Request;
  abort?: AbortController;
  /** The body, once read directly; a Request built later gets these bytes. */
  body?: Promise<Uint8Array>;
  /** This request's body was asked for (its copy's asking reads the original's). */
  used?: boolean;
  /** A copy's original (clone()), which reads the body for both: node's stream is read once. */
  origin?: LazyState;
  /** Copies were made: a Request built from either reads the body whole first, never the stream. */
  copied?: boolean;
  /** What those whole reads are held to (LIMIT_BODY): MAX_BODY_SIZE, where everest set it. */
  limit?: number;
  /** The client left before the response was complete. */
  gone: boolean;
}

const STATE = Symbol("node request");

export type LazyRequest = Request & { [STATE]: LazyState };

function signalOf(state: LazyState): AbortSignal {
  if (!state.abort) {
    state.abort = new AbortController();
    if (state.gone) state.abort.abort();
  }
  return state.abort.signal;
}

/** The state that reads the IncomingMessage's body: a copy's original, else its own. */
const reader = (state: LazyState) => state.origin ?? state;

function materialise(state: LazyState): Request {
  if (!state.request) {
    const method = state.req.method ?? "GET";
    const hasBody = method !== "GET" && method !== "HEAD";
    const from = reader(state);
    const read = !hasBody ? null : (from.body ?? (from.copied ? readDirect(state, from.limit ?? Infinity)! : null));
    state.request = new Request(state.url, {
      method,
      headers: state.headers?.native ?? headersOf(state.req),
      body: !hasBody ? undefined : read ? bodyStream(read) : (Readable.toWeb(state.req) as unknown as ReadableStream<Uint8Array>),
      duplex: "half",
      signal: signalOf(from),
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

/** Bytes read already, held to a reader's limit. */
function within(body: Promise<Uint8Array>, limit: number): Promise<Uint8Array> {
  if (limit === Infinity) return body;
  return body.then((bytes) => {
    if (bytes.byteLength > limit) throw new BodyError("too-large", limit);
    return bytes;
  });
}

/**
 * The whole body, refused past `limit` bytes without keeping more of it; read once, for the
 * request and its copies alike. Null once a Request owns the stream.
 */
function readDirect(state: LazyState, limit: number): Promise<Uint8Array> | null {
  const from = reader(state);
  if (state.request || (from.request && !from.body)) return null;
  state.used = true;
  if (from.body) return within(from.body, limit);
  const req = from.req;
  from.body = new Promise<Uint8Array>((resolve, reject) => {
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
        // The rest is read and dropped, so the connection serves the requests behind it: paused,
        // a body partly read was never drained by node:http, and the connection hung until reset.
        done(new BodyError("too-large", limit));
        req.resume();
      } else chunks.push(chunk);
    };
    const onEnd = () => done(null);
    // node:http ends a body the client abandoned (closed mid-way, broken chunks) with an error:
    // the client's fault, answered 400 as Werkzeug answers it, not a server error to log.
    const onError = () => done(new BodyError("incomplete", limit));
    req.on("data", onData).on("end", onEnd).on("error", onError);
  });
  return from.body;
}

/** The body as `Request.arrayBuffer()` would give it; the body stream once a Request exists. */
async function bodyBytes(request: LazyRequest): Promise<Uint8Array> {
  const direct = readDirect(request[STATE], reader(request[STATE]).limit ?? Infinity);
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
      return signalOf(reader(this[STATE]));
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
      const state = this[STATE];
      return state.request ? state.request.bodyUsed : state.used === true;
    },
  },
  // A copy that shares the body as it is read (an on_pre hook's, src/events/hook-bodies.ts), not
  // a Request built to be teed: that made every POST of a resource with such a hook four times dearer.
  clone: {
    value(this: LazyRequest) {
      const state = this[STATE];
      const from = reader(state);
      if (state.request || from.request) return materialise(state).clone();
      from.copied = true;
      const copy = Object.create(lazyPrototype) as LazyRequest;
      copy[STATE] = { req: from.req, url: state.url, gone: false, origin: from };
      return copy;
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
  [LIMIT_BODY]: {
    value(this: LazyRequest, limit: number) {
      reader(this[STATE]).limit = limit;
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
export function toRequest(req: IncomingMessage, host: string): LazyRequest | null {
  const url = urlOf(req, host);
  if (url === null) return null;
  const request = Object.create(lazyPrototype) as LazyRequest;
  request[STATE] = { req, url, gone: false };
  return request;
}

/** The client left before the response was complete: a signal handed out aborts. */
export function clientGone(request: LazyRequest): void {
  const state = request[STATE];
  state.gone = true;
  state.abort?.abort();
}
