// Per-call state: what a call of the internal core (src/methods/*: getInternal, patchInternal, …)
// needs to know besides its arguments, whether an HTTP request made it (src/context.ts extends
// this with the Request) or server code did (src/internal.ts). Nothing here reads a Request.
import type { Resource } from "./settings/normalize.ts";

export type EndpointKind = "home" | "collection" | "item" | "media" | "schema" | "openapi" | "docs" | "health" | "metrics";

export interface Endpoint {
  kind: EndpointKind;
  resource?: Resource;
  /** For items: which lookup matched (the primary one or additional_lookup). */
  lookupField?: string;
}

export interface ScopeInit {
  method: string;
  /** Scheme and host absolute links (Location) are made with; "" for server calls. */
  origin: string;
  /** The path the call addresses, decoded (src/http/request-path.ts): links in the answer follow it. */
  path: string;
  /** Query parameters of a read (`where`, `sort`, `embedded`, `version`, …); parsed from `query` when first asked if not given. */
  args?: URLSearchParams;
  /** The query string as the request sent it; "" for server calls. */
  query?: string;
  /** The client's address, or how to find it when first asked (Bun's requestIP costs 0.5 µs). */
  clientIp: string | null | (() => string | null);
  /** The answer is only rendered into a response (an HTTP request), never handed to server code. */
  rendered?: boolean;
}

const NO_ROLES: readonly string[] = Object.freeze([]);

export class CallScope {
  /** The method to execute: the request's, or X-HTTP-Method-Override's on a POST. */
  method: string;
  readonly origin: string;
  readonly path: string;
  /** The query string as the request sent it ("" without one, and for server calls). */
  readonly query: string;
  /**
   * Whether the answer only becomes a response's body. Server code (src/internal.ts) gets the
   * documents themselves and may change them anywhere, so its reads never share the store's values.
   */
  readonly rendered: boolean;
  /**
   * Set by the App before dispatch: the answer will be written as JSON without `?pretty`, so a
   * method may hand over a body it has written itself (Reply.json, src/render/kept-json.ts).
   */
  compactJson = false;
  endpoint: Endpoint = { kind: "home" };
  /** Path values: the item lookup value and sub-resource segments. */
  params: Record<string, string> = {};
  /** Set by an auth check: the value of auth_field for this user. */
  requestAuthValue: unknown = undefined;
  /** Set by an auth check: undefined = resource default, null = default database. */
  dbPrefix: string | null | undefined = undefined;
  /** The authenticated user or token, for OPLOG_AUDIT and field rules' `field_access`. */
  user: string | null = null;
  /**
   * Media fields are rendered as their URLs whatever RETURN_MEDIA_AS_BASE64_STRING says: set for
   * a change stream, whose events never carry a file's bytes (docs/feed.md).
   */
  mediaAsUrl = false;
  /**
   * Set by an auth check: the roles of the account that authenticated, which field rules
   * (`allowed_read_roles` / `allowed_write_roles` in a field's definition) are checked against.
   */
  roles: readonly string[] = NO_ROLES;
  /**
   * Server code acting on its own (src/internal.ts without `on:`): every field is readable and
   * writable, whatever the field rules say. Never true for a request.
   */
  unrestricted = false;
  #clientIp: string | null | (() => string | null);
  #args: URLSearchParams | undefined;

  constructor(init: ScopeInit) {
    this.method = init.method;
    this.origin = init.origin;
    this.path = init.path;
    this.#args = init.args;
    this.query = init.query ?? "";
    this.rendered = init.rendered ?? false;
    this.#clientIp = init.clientIp;
  }

  /**
   * Parsed when first asked: most requests carry no query string, and a URLSearchParams costs
   * its construction and, on Deno, Web IDL conversions at each call (bench/README.md, issue 36).
   */
  get args(): URLSearchParams {
    return (this.#args ??= new URLSearchParams(this.query));
  }

  /** The query's first value of `name`, or null (absent); without a query string nothing is parsed. */
  arg(name: string): string | null {
    return this.#args || this.query ? this.args.get(name) : null;
  }

  /** Where the call came from; only rate limits, logs and the oplog's audit ask. */
  get clientIp(): string | null {
    const known = this.#clientIp;
    return typeof known === "function" ? (this.#clientIp = known()) : known;
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

  /** The caller's roles, for a custom auth check (the built-in ones set them from their accounts). */
  setRequestRoles(roles: readonly string[]): void {
    // A frozen list (the built-in auth classes freeze their accounts' once) is kept as it is.
    this.roles = Object.isFrozen(roles) ? roles : Object.freeze([...roles]);
  }
}
