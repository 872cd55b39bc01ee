// Server-side access to any resource, internal ones included: Eve's get_internal,
// getitem_internal, post_internal, patch_internal, put_internal, deleteitem_internal and delete.
// Each call runs the method an HTTP request would (validation, meta fields, database hooks,
// document features such as versioning and the oplog) without authentication, rate limits or
// request hooks, and with unconditional writes unless an ETag is given. It answers what an HTTP
// client would receive, unrendered: `{status, body, etag}`, errors included.
import { ObjectId } from "bson";
import { RequestContext, type EndpointKind } from "./context.ts";
import type { Doc, Filter } from "./drivers/types.ts";
import { HttpError } from "./errors.ts";
import type { Reply } from "./render/reply.ts";
import { convertPathValue } from "./routing/lookup.ts";
import { deleteCollection, deleteItem } from "./methods/delete.ts";
import { getCollection, getItem } from "./methods/get.ts";
import { patchItem } from "./methods/patch.ts";
import { postCollection } from "./methods/post.ts";
import { putItem } from "./methods/put.ts";
import { errorReply } from "./render/respond.ts";
import type { Resource } from "./settings/normalize.ts";
import type { Services } from "./services.ts";
import { fillUrl } from "./settings/urls.ts";

export interface InternalReply {
  status: number;
  /** Dates and ObjectIds as values, not yet rendered; null for 204. */
  body: Doc | null;
  etag?: string;
}

export interface InternalOptions {
  /**
   * The request the call is made for (a hook's or a custom route's): its auth value (so
   * user-restricted access holds), database prefix, user and client address apply.
   */
  on?: RequestContext;
  /** Writes are unconditional unless given the ETag to match, as `If-Match` would be. */
  etag?: string;
}

/** Query parameters of a read (`where`, `sort`, `max_results`, `projection`, `embedded`, …). */
export type InternalArgs = Record<string, string | number | Record<string, unknown>>;

type Method = (services: Services, ctx: RequestContext, lookup: Filter) => Promise<Reply>;

function idString(value: unknown): string {
  return value instanceof ObjectId ? value.toHexString() : String(value);
}

export class InternalApi {
  constructor(private readonly services: Services) {}

  /** A page of the collection (Eve's `get_internal`): `lookup` ANDed with `args.where`. */
  get(resource: string, lookup: Filter = {}, args: InternalArgs = {}, options: Pick<InternalOptions, "on"> = {}): Promise<InternalReply> {
    return this.call("GET", "collection", resource, lookup, getCollection, { args, ...options });
  }

  getItem(resource: string, lookup: Filter, args: InternalArgs = {}, options: Pick<InternalOptions, "on"> = {}): Promise<InternalReply> {
    return this.call("GET", "item", resource, lookup, getItem, { args, ...options });
  }

  /** One document or a list, validated and stamped as a POST. */
  post(resource: string, payload: Doc | Doc[], options: Pick<InternalOptions, "on"> = {}): Promise<InternalReply> {
    return this.call("POST", "collection", resource, {}, (services, ctx) => postCollection(services, ctx), { payload, ...options });
  }

  patch(resource: string, lookup: Filter, updates: Doc, options: InternalOptions = {}): Promise<InternalReply> {
    return this.call("PATCH", "item", resource, lookup, patchItem, { payload: updates, ...options });
  }

  /** Replaces the document, or creates it at `lookup`'s id when missing and UPSERT_ON_PUT allows. */
  put(resource: string, lookup: Filter, document: Doc, options: InternalOptions = {}): Promise<InternalReply> {
    return this.call("PUT", "item", resource, lookup, putItem, { payload: document, ...options });
  }

  deleteItem(resource: string, lookup: Filter, options: InternalOptions = {}): Promise<InternalReply> {
    return this.call("DELETE", "item", resource, lookup, deleteItem, options);
  }

  /** Every document matching `lookup` (404 when none). */
  delete(resource: string, lookup: Filter = {}, options: Pick<InternalOptions, "on"> = {}): Promise<InternalReply> {
    return this.call("DELETE", "collection", resource, lookup, deleteCollection, options);
  }

  private async call(
    method: string,
    kind: EndpointKind,
    name: string,
    rawLookup: Filter,
    run: Method,
    options: InternalOptions & { args?: InternalArgs; payload?: unknown },
  ): Promise<InternalReply> {
    const resource = this.services.config.DOMAIN[name];
    if (!resource) throw new Error(`unknown resource '${name}'`);
    const lookup = this.typed(resource, rawLookup);
    const ctx = this.context(method, kind, resource, lookup, options);
    let reply: Reply;
    try {
      reply = await run(this.services, ctx, lookup);
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

  /** A request as the route would have made it; links in the answer follow its path. */
  private context(method: string, kind: EndpointKind, resource: Resource, lookup: Filter, options: InternalOptions & { args?: InternalArgs; payload?: unknown }): RequestContext {
    const config = this.services.config;
    const segments = fillUrl(resource.url, ({ name }) => (lookup[name] !== undefined ? encodeURIComponent(idString(lookup[name])) : name));
    const lookupField = resource.item_lookup_field;
    const item = kind === "item" && lookup[lookupField] !== undefined ? idString(lookup[lookupField]) : undefined;
    const url = new URL(`http://internal${config.basePath}/${segments}${item !== undefined ? `/${encodeURIComponent(item)}` : ""}`);
    for (const [key, value] of Object.entries(options.args ?? {})) url.searchParams.set(key, typeof value === "object" ? JSON.stringify(value) : String(value));
    const headers: Record<string, string> = options.etag !== undefined ? { "If-Match": `"${options.etag}"` } : {};

    const on = options.on;
    const ctx = new RequestContext(new Request(url, { method, headers }), config.MAX_BODY_SIZE, { clientIp: on?.clientIp ?? null });
    ctx.internal = true;
    ctx.endpoint = { kind, resource, lookupField };
    if (item !== undefined) ctx.params = { lookup: item };
    if (options.payload !== undefined) ctx.payload = options.payload;
    if (on) {
      ctx.requestAuthValue = on.requestAuthValue;
      ctx.dbPrefix = on.dbPrefix;
      ctx.user = on.user;
    }
    return ctx;
  }
}
