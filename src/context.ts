// Per-request state. Everything that varies between two concurrent requests lives here, never
// on the App, so one handler serves any number of requests at once on every runtime; what is
// the same for every request (settings, data, hooks) is passed to the code that uses it.
import { CallScope } from "./scope.ts";
import type { PlainHeaders } from "./http/known-body.ts";
import { decodePath } from "./http/request-path.ts";

/** A call made by an HTTP request: the scope plus the request itself and what is built from it. */
export class RequestContext extends CallScope {
  readonly request: Request;
  /**
   * The request's URL makes no URL (Bun hands `/people` for a request without a usable Host;
   * Deno and Bun pass `Host: a b` on): App.fetch answers 400 before anything else.
   */
  readonly unreadableUrl: boolean;
  /** The path as the request sent it, percent-escapes and all (`path` is decoded), for the access log. */
  readonly sentPath: string;
  /** Bytes of body this request may send (MAX_BODY_SIZE). */
  readonly maxBodySize: number;
  /** The raw body, once read (auth checks such as HMAC need it before the method does). */
  bodyText?: string;
  /** Headers added to whatever response is sent (rate limits, CORS, …), names in lower case. */
  readonly responseHeaders: PlainHeaders = {};
  readonly env: unknown;
  readonly executionCtx: unknown;

  constructor(request: Request, maxBodySize: number, env?: unknown, executionCtx?: unknown) {
    const parts = urlParts(request.url);
    const { origin, path, query } = parts ?? NO_URL;
    super({ method: request.method.toUpperCase(), origin, path: decodePath(path), query, clientIp: () => clientIpOf(request, env), rendered: true });
    this.sentPath = path;
    this.unreadableUrl = parts === null;
    this.maxBodySize = maxBodySize;
    this.request = request;
    this.env = env;
    this.executionCtx = executionCtx;
  }
}

const NO_URL = { origin: "", path: "", query: "" };

/** A host and port any URL parser takes; anything else (IPv6, `a b`) is asked of URL. */
const PLAIN_HOST = /^[\w.:-]+$/;

/**
 * Origin, path and query of a URL as Request.url always gives it (already parsed and serialised
 * by the runtime: lower-case host, no default port, percent-encoded), read off the string. A
 * URL parse per request cost 2.5% of a POST's server time on Deno, where it is a call out of
 * JavaScript. Anything unexpected goes through URL.
 */
function urlParts(href: string): { origin: string; path: string; query: string } | null {
  const scheme = href.indexOf("://");
  const slash = scheme > 0 ? href.indexOf("/", scheme + 3) : -1;
  if (slash < 0 || !href.startsWith("http")) {
    if (!URL.canParse(href)) return null;
    const url = new URL(href);
    return { origin: url.origin, path: url.pathname, query: url.search };
  }
  // Runtimes that serialise a parsed URL give a valid host; Deno and Bun pass the Host header on as it came.
  if (!PLAIN_HOST.test(href.slice(scheme + 3, slash)) && !URL.canParse(href)) return null;
  const hash = href.indexOf("#", slash);
  const end = hash < 0 ? href.length : hash;
  const question = href.indexOf("?", slash);
  const queryAt = question >= 0 && question < end ? question : end;
  return { origin: href.slice(0, slash), path: href.slice(slash, queryAt), query: href.slice(queryAt, end) };
}

// The second argument of the handler says who the client is, by runtime:
// - everest's adapters (adapters/node.ts, deno.ts, bun.ts): `{ clientIp }`;
// - `Deno.serve(handler)`: the ServeHandlerInfo, `{ remoteAddr: { hostname, port, transport } }`;
// - `Bun.serve({ fetch: handler })`: the Server, whose `requestIP(request)` gives `{ address }`;
// - Workers: the bindings; Cloudflare's edge sets cf-connecting-ip (the client cannot).
function clientIpOf(request: Request, env: unknown): string | null {
  if (env !== null && typeof env === "object") {
    const given = env as { clientIp?: unknown; remoteAddr?: { hostname?: unknown }; requestIP?: unknown };
    if (typeof given.clientIp === "string") return given.clientIp;
    if (typeof given.remoteAddr?.hostname === "string") return given.remoteAddr.hostname;
    if (typeof given.requestIP === "function") {
      const address = (given.requestIP as (request: Request) => { address?: unknown } | null).call(env, request)?.address;
      if (typeof address === "string") return address;
    }
  }
  return request.headers.get("cf-connecting-ip");
}
