// Who may do what: Eve's `requires_auth` (which auth class, which methods are public, which roles
// the check receives), the home and schema listings (`canRead`), user-restricted access
// (`authFieldFilter`) and the rate limit, which counts a request once its client is known.
import type { CallScope } from "../scope.ts";
import type { RequestContext } from "../context.ts";
import type { Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { enforceRateLimit, type RateLimitStore } from "../ratelimit/index.ts";
import { SCHEMA_GROUP } from "../routing/router.ts";
import type { Config, Resource } from "../settings/normalize.ts";
// The type only: an API without authentication never loads the auth classes (its settings
// import them when it has any), which keeps them out of a Worker's bundle.
import type { Auth } from "./auth.ts";

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * An `AUTH` / `authentication` setting → the one instance every request shares. An instance is
 * recognised by its methods, not by instanceof, which an Auth from another copy of everest (a
 * bundled settings module) would fail.
 */
function instantiate(value: unknown, setting: string): Auth | null {
  if (value === null || value === undefined || value === false) return null;
  if (typeof value === "function") return instantiate(new (value as new () => unknown)(), setting);
  if (typeof value === "object" && typeof (value as Auth).authorized === "function" && typeof (value as Auth).authenticate === "function") {
    return value as Auth;
  }
  throw new Error(`${setting}: expected an auth class or instance (BasicAuth, TokenAuth, HMACAuth or a subclass), got ${typeof value}`);
}

/** The rate limit's client key, made only if a limit is counted: a verified user by name, anyone else by address. */
function clientOf(ctx: RequestContext, user: string | null): () => string {
  return () => (user !== null ? `user:${user}` : `ip:${ctx.clientIp ?? "unknown"}`);
}

/** Whether `method` is open to everyone; HEAD is as public as GET. */
function isPublic(publicMethods: readonly string[], method: string): boolean {
  return publicMethods.includes(method) || (method === "HEAD" && publicMethods.includes("GET"));
}

interface Requirement extends EndpointRequirement {
  auth: Auth | null;
}

export interface EndpointRequirement {
  publicMethods: readonly string[];
  roles: string[];
  resource: string | null;
}

/** Which methods are public and which roles the auth check receives, for a resource's collection or items, or the API's other endpoints (resource null). */
export function endpointRequirement(config: Config, resource: Resource | null, item: boolean, method: string): EndpointRequirement {
  const read = READ_METHODS.has(method);
  if (!resource) {
    return {
      publicMethods: config.PUBLIC_METHODS,
      roles: [...config.ALLOWED_ROLES, ...(read ? config.ALLOWED_READ_ROLES : config.ALLOWED_WRITE_ROLES)],
      resource: null,
    };
  }
  if (item) {
    return {
      publicMethods: resource.public_item_methods,
      roles: [...resource.allowed_item_roles, ...(read ? resource.allowed_item_read_roles : resource.allowed_item_write_roles)],
      resource: resource.name,
    };
  }
  return {
    publicMethods: resource.public_methods,
    roles: [...resource.allowed_roles, ...(read ? resource.allowed_read_roles : resource.allowed_write_roles)],
    resource: resource.name,
  };
}

export class AccessControl {
  private readonly globalAuth: Auth | null;
  private readonly resourceAuth = new Map<string, Auth | null>();
  private readonly anyAuth: boolean;

  constructor(
    private readonly config: Config,
    private readonly rateLimits: RateLimitStore,
  ) {
    this.globalAuth = instantiate(config.AUTH, "AUTH");
    // A class given in several places is instantiated once, as Eve keeps one per resource.
    const instances = new Map<unknown, Auth | null>([[config.AUTH, this.globalAuth]]);
    for (const resource of Object.values(config.DOMAIN)) {
      const value = resource.authentication;
      if (!instances.has(value)) instances.set(value, instantiate(value, `DOMAIN.${resource.name}.authentication`));
      this.resourceAuth.set(resource.name, instances.get(value)!);
    }
    this.anyAuth = this.globalAuth !== null || [...this.resourceAuth.values()].some((auth) => auth !== null);
  }

  /**
   * Whether reading a resource's items asks more than the API's own endpoints (home, media) do:
   * another auth class, other public methods or other roles. The media endpoint checks no more.
   */
  itemsAskMore(resource: Resource): boolean {
    const item = endpointRequirement(this.config, resource, true, "GET");
    const api = endpointRequirement(this.config, null, false, "GET");
    const roles = (list: readonly string[]) => [...list].sort().join("\u0000");
    return this.authFor(resource) !== this.globalAuth || isPublic(item.publicMethods, "GET") !== isPublic(api.publicMethods, "GET") || roles(item.roles) !== roles(api.roles);
  }

  authFor(resource: Resource | null): Auth | null {
    return resource ? (this.resourceAuth.get(resource.name) ?? null) : this.globalAuth;
  }

  /** Eve's `requires_auth(endpoint_class)` for the endpoint the request reached. */
  private requirement(ctx: RequestContext): Requirement {
    const { kind } = ctx.endpoint;
    const schemaName = kind === "schema" ? ctx.params[SCHEMA_GROUP] : undefined;
    // Own keys only: `/schema/__proto__` must not find Object.prototype.
    const schemaOf = schemaName !== undefined && Object.hasOwn(this.config.DOMAIN, schemaName) ? this.config.DOMAIN[schemaName] : undefined;
    const resource = (kind === "collection" || kind === "item" ? ctx.endpoint.resource : schemaOf) ?? null;
    return { auth: this.authFor(resource), ...endpointRequirement(this.config, resource, kind === "item", ctx.method) };
  }

  /**
   * Lets the request through or throws: 401 from the auth class, 429 from the rate limit. The
   * limit counts a verified user under their name and anyone else under their address, so a
   * client cannot escape it by claiming names, and failed attempts count too.
   */
  admit(ctx: RequestContext): Promise<void> | undefined {
    // No auth class anywhere: every request is public, only the rate limit applies.
    if (!this.anyAuth) return enforceRateLimit(this.config, ctx, this.rateLimits, clientOf(ctx, null));
    return this.admitWithAuth(ctx);
  }

  private async admitWithAuth(ctx: RequestContext): Promise<void> {
    const { auth, publicMethods, roles, resource } = this.requirement(ctx);
    if (!auth || isPublic(publicMethods, ctx.method)) {
      await enforceRateLimit(this.config, ctx, this.rateLimits, clientOf(ctx, null));
      return;
    }
    if (!(await auth.authorized(ctx, roles, resource, ctx.method))) {
      await enforceRateLimit(this.config, ctx, this.rateLimits, clientOf(ctx, null));
      auth.authenticate(ctx);
    }
    await enforceRateLimit(this.config, ctx, this.rateLimits, clientOf(ctx, ctx.user));
  }

  /**
   * Whether the caller may read a resource's collection (the home page and the schema endpoint
   * list only those) or, with `item`, its items (the media endpoint serves their files).
   */
  async canRead(ctx: RequestContext, resource: Resource, item = false): Promise<boolean> {
    const auth = this.authFor(resource);
    const { publicMethods, roles } = endpointRequirement(this.config, resource, item, "GET");
    if (!auth || isPublic(publicMethods, "GET")) return true;
    try {
      return await auth.authorized(ctx, roles, resource.name, "GET");
    } catch (error) {
      // A check that aborts (403, say) refuses this one resource, not the whole listing.
      if (error instanceof HttpError) return false;
      throw error;
    }
  }
}

/** The value comparison Eve makes between a query's auth_field and the caller's value. */
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || (a !== null && b !== null && typeof a === "object" && typeof b === "object" && String(a) === String(b));
}

/**
 * The conditions on `field` in a filter and in the `$and`s it nests, as Eve's
 * get_value_from_query finds them: whatever the condition is, a value or operators.
 */
function conditionsOn(filter: Filter, field: string): unknown[] {
  const found: unknown[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === field) found.push(value);
    else if (key === "$and" && Array.isArray(value)) {
      for (const part of value) if (part && typeof part === "object") found.push(...conditionsOn(part as Filter, field));
    }
  }
  return found;
}

/**
 * User-restricted access: `{auth_field: value}` for a request whose auth check set a value,
 * unless the method is public on this endpoint (Eve's `auth_field_and_value`). A query or a
 * datasource filter with any other condition on the field — another user's value, or an
 * operator such as `{$exists: true}` — is refused with Eve's 401 (eve/io/base.py
 * `_datasource_ex`), rather than ANDed into a query that could only come back empty.
 */
export function authFieldFilter(ctx: CallScope, resource: Resource, query?: Filter): Filter | null {
  const field = resource.auth_field;
  const value = ctx.requestAuthValue;
  if (!field || value === undefined || value === null || value === "") return null;
  const publicMethods = ctx.endpoint.kind === "collection" ? resource.public_methods : resource.public_item_methods;
  if (isPublic(publicMethods, ctx.method)) return null;
  const conditions = [...(query ? conditionsOn(query, field) : []), ...(resource.datasource.filter ? conditionsOn(resource.datasource.filter, field) : [])];
  if (conditions.some((asked) => !sameValue(asked, value))) {
    throw new HttpError(401, "Incompatible User-Restricted Resource request.");
  }
  return { [field]: value };
}
