// Server-side access to any resource, internal ones included: Eve's get_internal,
// getitem_internal, post_internal, patch_internal, put_internal, deleteitem_internal and delete.
// Each call runs the core that the HTTP method decorates (src/methods/*: validation, meta
// fields, database hooks, document features such as versioning and the oplog), in a scope of
// its own: no Request, no authentication, rate limits or request hooks, and unconditional
// writes unless an ETag is given. It answers what an HTTP client would receive, unrendered:
// `{status, body, etag}`, errors included.
import { ObjectId } from "bson";
import type { Doc, Filter } from "./drivers/types.ts";
import { HttpError } from "./errors.ts";
import type { Reply } from "./render/reply.ts";
import { convertPathValue } from "./routing/lookup.ts";
import { deleteInternal, deleteItemInternal } from "./methods/delete.ts";
import { getInternal, getItemInternal } from "./methods/get.ts";
import { patchInternal } from "./methods/patch.ts";
import { optInWrites } from "./methods/opt-in-loader.ts";
import { postInternal } from "./methods/post.ts";
import { putInternal } from "./methods/put.ts";
import type { Precondition } from "./methods/conditional.ts";
import { errorReply } from "./render/respond.ts";
import { CallScope, type EndpointKind } from "./scope.ts";
import type { Resource } from "./settings/normalize.ts";
import type { Services } from "./services.ts";
import { fillUrl } from "./settings/urls.ts";
import { objectIdHex } from "./util/objectid.ts";

export interface InternalReply {
  status: number;
  /** Dates and ObjectIds as values, not yet rendered; null for 204. */
  body: Doc | null;
  etag?: string;
}

export interface InternalOptions {
  /**
   * The request the call is made for (a hook's or a custom route's): its auth value (so
   * user-restricted access holds), database prefix, user, roles (so field rules hold) and
   * client address apply. Without it the call may read and write every field.
   */
  on?: CallScope;
  /** Writes are unconditional unless given the ETag to match, as `If-Match` would be. */
  etag?: string;
}

/** Query parameters of a read (`where`, `sort`, `max_results`, `projection`, `embedded`, …). */
export type InternalArgs = Record<string, string | number | Record<string, unknown>>;

type Core = (services: Services, scope: CallScope, lookup: Filter) => Promise<Reply>;

function idString(value: unknown): string {
  return value instanceof ObjectId ? objectIdHex(value) : String(value);
}

export class InternalApi {
  constructor(private readonly services: Services) {}

  /** A page of the collection (Eve's `get_internal`): `lookup` ANDed with `args.where`. */
  get(resource: string, lookup: Filter = {}, args: InternalArgs = {}, options: Pick<InternalOptions, "on"> = {}): Promise<InternalReply> {
    return this.call("GET", "collection", resource, lookup, getInternal, { args, ...options });
  }

  getItem(resource: string, lookup: Filter, args: InternalArgs = {}, options: Pick<InternalOptions, "on"> = {}): Promise<InternalReply> {
    return this.call("GET", "item", resource, lookup, (services, scope, typed) => getItemInternal(services, scope, typed), { args, ...options });
  }

  /** One document or a list, validated and stamped as a POST. */
  post(resource: string, payload: Doc | Doc[], options: Pick<InternalOptions, "on"> = {}): Promise<InternalReply> {
    return this.call("POST", "collection", resource, {}, (services, scope) => postInternal(services, scope, payload), options);
  }

  patch(resource: string, lookup: Filter, updates: Doc, options: InternalOptions = {}): Promise<InternalReply> {
    // Update operators (docs/updates.md) are a module of their own, imported when a resource has them.
    const core = async () => (this.services.config.DOMAIN[resource]?.update_operators.length ? (await optInWrites()).operatorPatchInternal : patchInternal);
    return this.call("PATCH", "item", resource, lookup, async (services, scope, typed) => (await core())(services, scope, typed, async () => updates, precondition(options)), options);
  }

  /** Replaces the document, or creates it at `lookup`'s id when missing and UPSERT_ON_PUT allows. */
  put(resource: string, lookup: Filter, document: Doc, options: InternalOptions = {}): Promise<InternalReply> {
    return this.call("PUT", "item", resource, lookup, (services, scope, typed) => putInternal(services, scope, typed, async () => document, precondition(options)), options);
  }

  deleteItem(resource: string, lookup: Filter, options: InternalOptions = {}): Promise<InternalReply> {
    return this.call("DELETE", "item", resource, lookup, (services, scope, typed) => deleteItemInternal(services, scope, typed, precondition(options)), options);
  }

  /** Every document matching `lookup` (404 when none). */
  delete(resource: string, lookup: Filter = {}, options: Pick<InternalOptions, "on"> = {}): Promise<InternalReply> {
    return this.call("DELETE", "collection", resource, lookup, deleteInternal, options);
  }

  /**
   * A PATCH by filter (docs/updates.md): every document matching `where` in the resource's
   * scope gets `updates` (plain fields and, where the resource allows them, update operators),
   * all checked first; no max-affected unless `maxAffected` is given.
   */
  patchWhere(resource: string, where: Filter, updates: Doc, options: Pick<InternalOptions, "on"> & { maxAffected?: number } = {}): Promise<InternalReply> {
    return this.call("PATCH", "collection", resource, where, async (services, scope, typed) => (await optInWrites()).patchManyInternal(services, scope, typed, updates, options.maxAffected ?? null), options);
  }

  /** A DELETE by filter (docs/updates.md): every live document matching `where` in the resource's scope. */
  deleteWhere(resource: string, where: Filter, options: Pick<InternalOptions, "on"> & { maxAffected?: number } = {}): Promise<InternalReply> {
    return this.call("DELETE", "collection", resource, where, async (services, scope, typed) => (await optInWrites()).deleteManyInternal(services, scope, typed, options.maxAffected ?? null), options);
  }

  private async call(
    method: string,
    kind: EndpointKind,
    name: string,
    rawLookup: Filter,
    run: Core,
    options: Pick<InternalOptions, "on"> & { args?: InternalArgs },
  ): Promise<InternalReply> {
    const resource = this.services.config.DOMAIN[name];
    if (!resource) throw new Error(`unknown resource '${name}'`);
    const lookup = this.typed(resource, rawLookup);
    const scope = this.scope(method, kind, resource, lookup, options);
    let reply: Reply;
    try {
      reply = await run(this.services, scope, lookup);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      reply = errorReply(this.services.config, error);
    }
    return { status: reply.status, body: reply.body, ...(reply.etag !== undefined ? { etag: reply.etag } : {}) };
  }

  /** String values of top-level fields are typed as URL segments are (`{_id: "<hex>"}` works). */
  private typed(resource: Resource, lookup: Filter): Filter {
    const out: Filter = {};
    for (const [field, value] of Object.entries(lookup)) {
      out[field] = typeof value === "string" && !field.startsWith("$") ? convertPathValue(resource, field, value, this.services.config) : value;
    }
    return out;
  }

  /** The scope an HTTP request to the same URL would have; links in the answer follow its path. */
  private scope(method: string, kind: EndpointKind, resource: Resource, lookup: Filter, options: Pick<InternalOptions, "on"> & { args?: InternalArgs }): CallScope {
    const config = this.services.config;
    const segments = fillUrl(resource.url, ({ name }) => (lookup[name] !== undefined ? idString(lookup[name]) : name));
    const lookupField = resource.item_lookup_field;
    const item = kind === "item" && lookup[lookupField] !== undefined ? idString(lookup[lookupField]) : undefined;
    const args = new URLSearchParams();
    for (const [key, value] of Object.entries(options.args ?? {})) args.set(key, typeof value === "object" ? JSON.stringify(value) : String(value));
    const on = options.on;
    const path = `${config.basePath}/${segments}${item !== undefined ? `/${item}` : ""}`;
    const scope = new CallScope({ method, origin: "", path, args, clientIp: on?.clientIp ?? null });
    scope.endpoint = { kind, resource, lookupField };
    if (item !== undefined) scope.params = { lookup: item };
    if (on) {
      scope.requestAuthValue = on.requestAuthValue;
      scope.dbPrefix = on.dbPrefix;
      scope.user = on.user;
      scope.roles = on.roles;
      scope.unrestricted = on.unrestricted;
    } else {
      // Server code acting on its own reads and writes every field (docs/contracts.md §4).
      scope.unrestricted = true;
    }
    return scope;
  }
}

/** Server code writes unconditionally unless it names the ETag to match. */
function precondition(options: InternalOptions): Precondition {
  return { ifMatch: options.etag ?? null, enforce: false };
}
