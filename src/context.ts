// Per-request state. Everything that varies between two concurrent requests lives here, never
// on the App, so one handler serves any number of requests at once on every runtime; what is
// the same for every request (settings, data, hooks) is passed to the code that uses it.
import type { Resource } from "./settings/normalize.ts";

export type EndpointKind = "home" | "collection" | "item" | "media" | "schema" | "openapi" | "docs";

export interface Endpoint {
  kind: EndpointKind;
  resource?: Resource;
  /** For items: which lookup matched (the primary one or additional_lookup). */
  lookupField?: string;
}

export class RequestContext {
  readonly request: Request;
  readonly url: URL;
  /** The method to execute: the request's, or X-HTTP-Method-Override's on a POST. */
  method: string;
  readonly args: URLSearchParams;
  endpoint: Endpoint = { kind: "home" };
  /** Path values: the item lookup value and sub-resource segments. */
  params: Record<string, string> = {};
  /** Bytes of body this request may send (MAX_BODY_SIZE). */
  readonly maxBodySize: number;
  /** The raw body, once read (auth checks such as HMAC need it before the method does). */
  bodyText?: string;
  /** A call from server code (`app.internal`): no If-Match is required of it. */
  internal = false;
  /** The payload server code hands over instead of a body (`app.internal`). */
  payload?: unknown;
  /** Set by an auth check: the value of auth_field for this user. */
  requestAuthValue: unknown = undefined;
  /** Set by an auth check: undefined = resource default, null = default database. */
  dbPrefix: string | null | undefined = undefined;
  /** The authenticated user or token, for OPLOG_AUDIT. */
  user: string | null = null;
  /** Headers added to whatever response is sent (rate limits, CORS, …). */
  readonly responseHeaders = new Headers();
  readonly env: unknown;
  readonly executionCtx: unknown;
  readonly clientIp: string | null;

  constructor(request: Request, maxBodySize: number, env?: unknown, executionCtx?: unknown) {
    this.maxBodySize = maxBodySize;
    this.request = request;
    this.url = new URL(request.url);
    this.args = this.url.searchParams;
    this.method = request.method.toUpperCase();
    this.env = env;
    this.executionCtx = executionCtx;
    this.clientIp = clientIpOf(request, env);
  }

  get resource(): Resource | undefined {
    return this.endpoint.resource;
  }

  setRequestAuthValue(value: unknown): void {
    this.requestAuthValue = value;
  }

  setDbPrefix(prefix: string | null): void {
    this.dbPrefix = prefix;
  }
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
