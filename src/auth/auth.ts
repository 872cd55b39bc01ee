// Eve's auth classes (eve/auth.py) over web-standard Requests. An instance is shared by every
// request, so nothing request-specific is stored on it: the user, the auth_field value and the
// db prefix go on the RequestContext that each check receives as its last argument.
import type { RequestContext } from "../context.ts";
import { HttpError } from "../errors.ts";
import { readBodyText } from "../request/payload.ts";
import { timingSafeEqual } from "../util/compare.ts";

/** The message of Eve's 401, which clients match on. */
export const CREDENTIALS_MESSAGE = "Please provide proper credentials";

const REALM = 'Basic realm="everest"';

const encoder = new TextEncoder();

/** HMAC-SHA256 of `data` under `secret`, lower-case hex: what HMACAuth expects clients to send. */
export async function hmacSha256Hex(secret: string, data: string | Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, bytes as Uint8Array<ArrayBuffer>));
  return Array.from(signature, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Roles allow when none are required, or when the account holds one of them. */
export function rolesAllow(allowedRoles: readonly string[], roles: readonly string[] | undefined): boolean {
  return allowedRoles.length === 0 || (roles ?? []).some((role) => allowedRoles.includes(role));
}

/**
 * An account whose credentials matched: its roles become the request's (field rules are checked
 * against them, docs/auth.md), and it passes when they allow the endpoint.
 */
function accountAllowed(ctx: RequestContext, allowedRoles: readonly string[], roles: readonly string[] | undefined): boolean {
  ctx.setRequestRoles(roles ?? []);
  return rolesAllow(allowedRoles, roles);
}

/** The accounts a class is given, each with its roles frozen once (the request keeps them as they are). */
function accounts<T extends { roles?: string[] }>(given: Record<string, T> | undefined): Array<[string, T]> {
  return Object.entries(given ?? {}).map(([name, account]) => [name, { ...account, roles: Object.freeze([...(account.roles ?? [])]) as string[] }]);
}

/** The credentials of an `Authorization: Basic …` header, or null when there are none. */
export function basicCredentials(request: Request): { username: string; password: string } | null {
  const match = /^basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(request.headers.get("authorization") ?? "");
  if (!match) return null;
  let decoded: string;
  try {
    const binary = atob(match[1]!.replace(/-/g, "+").replace(/_/g, "/"));
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
  // Werkzeug's partition: no colon is a username with an empty password (a token, say).
  const colon = decoded.indexOf(":");
  if (colon < 0) return { username: decoded, password: "" };
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * What every auth class provides: whether a request may pass (`authorized`) and the error sent
 * when it may not (`authenticate`). Subclass BasicAuth, TokenAuth or HMACAuth rather than this,
 * unless the credentials travel in a form none of them reads.
 */
export abstract class Auth {
  abstract authorized(ctx: RequestContext, allowedRoles: string[], resource: string | null, method: string): Promise<boolean>;

  /** Eve's `authenticate()`: the 401 for a request without acceptable credentials. */
  authenticate(_ctx: RequestContext): never {
    throw new HttpError(401, CREDENTIALS_MESSAGE, { headers: { "WWW-Authenticate": REALM } });
  }
}

export interface BasicAccount {
  password: string;
  roles?: string[];
}

/**
 * `Authorization: Basic base64(username:password)`. Override `checkAuth`, or give `users` for a
 * fixed set of accounts (passwords compared in constant time, roles checked against the
 * endpoint's allowed roles).
 */
export class BasicAuth extends Auth {
  private readonly users: Map<string, BasicAccount>;

  constructor(options: { users?: Record<string, BasicAccount> } = {}) {
    super();
    this.users = new Map(accounts(options.users));
  }

  checkAuth(username: string, password: string, allowedRoles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean | Promise<boolean> {
    const account = this.users.get(username);
    // Compare against something even for an unknown user, so timing does not reveal which exist.
    const matches = timingSafeEqual(password, account?.password ?? "\u0000" + password);
    return account !== undefined && matches && accountAllowed(ctx, allowedRoles, account.roles);
  }

  async authorized(ctx: RequestContext, allowedRoles: string[], resource: string | null, method: string): Promise<boolean> {
    const credentials = basicCredentials(ctx.request);
    if (!credentials) return false;
    ctx.user = credentials.username;
    return Boolean(await this.checkAuth(credentials.username, credentials.password, allowedRoles, resource, method, ctx));
  }
}

export interface TokenAccount {
  roles?: string[];
}

/**
 * A token as the username of a Basic credential (no password), or as the whole header, bare or
 * after `Token`/`Bearer`. Override `checkAuth`, or give `tokens` (each compared in constant time).
 */
export class TokenAuth extends Auth {
  private readonly tokens: Array<[string, TokenAccount]>;

  constructor(options: { tokens?: Record<string, TokenAccount> } = {}) {
    super();
    this.tokens = accounts(options.tokens);
  }

  checkAuth(token: string, allowedRoles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean | Promise<boolean> {
    // Every token is compared, without stopping at a match, so timing reveals nothing.
    let found: TokenAccount | undefined;
    for (const [candidate, account] of this.tokens) if (timingSafeEqual(token, candidate)) found = account;
    return found !== undefined && accountAllowed(ctx, allowedRoles, found.roles);
  }

  /** The token a request carries, as Eve's TokenAuth reads it. */
  token(request: Request): string | null {
    const basic = basicCredentials(request);
    if (basic) return basic.username || null;
    const header = request.headers.get("authorization")?.trim();
    if (!header) return null;
    const scheme = /^(?:token|bearer)\s+(\S+)$/i.exec(header);
    if (scheme) return scheme[1]!;
    return /\s/.test(header) ? null : header;
  }

  async authorized(ctx: RequestContext, allowedRoles: string[], resource: string | null, method: string): Promise<boolean> {
    const token = this.token(ctx.request);
    if (!token) return false;
    ctx.user = token;
    return Boolean(await this.checkAuth(token, allowedRoles, resource, method, ctx));
  }
}

export interface HmacAccount {
  secret: string;
  roles?: string[];
}

/**
 * `Authorization: <userid>:<hash>`, the hash being HMAC-SHA256 (hex) of the raw request body
 * under the user's secret. Override `checkAuth`, or give `secrets` for a fixed set of users.
 * No WWW-Authenticate: HMAC is no HTTP authentication scheme a browser could answer.
 */
export class HMACAuth extends Auth {
  private readonly secrets: Map<string, HmacAccount>;

  constructor(options: { secrets?: Record<string, HmacAccount> } = {}) {
    super();
    this.secrets = new Map(accounts(options.secrets));
  }

  async checkAuth(userid: string, hmacHash: string, _headers: Headers, data: string, allowedRoles: string[], _resource: string | null, _method: string, ctx: RequestContext): Promise<boolean> {
    const account = this.secrets.get(userid);
    if (!account) return false;
    const expected = await hmacSha256Hex(account.secret, data);
    return timingSafeEqual(hmacHash.toLowerCase(), expected) && accountAllowed(ctx, allowedRoles, account.roles);
  }

  override authenticate(_ctx: RequestContext): never {
    throw new HttpError(401, CREDENTIALS_MESSAGE);
  }

  async authorized(ctx: RequestContext, allowedRoles: string[], resource: string | null, method: string): Promise<boolean> {
    const parts = (ctx.request.headers.get("authorization") ?? "").split(":");
    if (parts.length !== 2 || !parts[0] || !parts[1]) return false;
    const [userid, hash] = parts as [string, string];
    ctx.user = userid;
    const data = await readBodyText(ctx);
    return Boolean(await this.checkAuth(userid, hash.trim(), ctx.request.headers, data, allowedRoles, resource, method, ctx));
  }
}
