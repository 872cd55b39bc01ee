// The application: settings compiled once (config, routes, validators, renderers, CORS), then
// `fetch` — the one entry point every runtime adapter calls. Nothing request-specific is kept
// here; it all lives in the RequestContext.
import { RequestContext } from "./context.ts";
import type { Endpoint } from "./scope.ts";
import { DataLayer } from "./data/layer.ts";
import { DriverPool } from "./data/pool.ts";
import { DatabaseUnavailableError, DuplicateKeyError, InvalidQueryError, type Driver, type Filter, type RuntimeServices } from "./drivers/types.ts";
import { HttpError, internalErrorResponse, isAnswerStatus, UNREADABLE_URL } from "./errors.ts";
import { checkHookName, Hooks, type HookMap, type HookName, type HookSignatures } from "./events/hooks.ts";
import { afterPostHooks, readableRequest } from "./events/hook-bodies.ts";
import { mediaFeature } from "./features/media.ts";
import { serveMedia } from "./endpoints/media.ts";
import { FeaturePipeline, type DocumentFeature } from "./features/pipeline.ts";
import { streamCredentials } from "./feed/credentials.ts";
import { FeedRegistry } from "./feed/registry.ts";
import { wantsEventStream } from "./feed/sse.ts";
import { InternalApi } from "./internal.ts";
import { KeptJson } from "./render/kept-json-loader.ts";
import { schemaEndpoint } from "./endpoints/schema.ts";
import { oplogFeatures } from "./features/oplog.ts";
import { versioningFeature } from "./features/versioning.ts";
import type { AccessEntry } from "./access-log.ts";
import { consoleLogger, type Logger } from "./logging.ts";
import { AccessControl } from "./auth/access.ts";
import { rateLimitStoreFor, type RateLimitStore } from "./ratelimit/index.ts";
import { Operations } from "./operations.ts";
import type { Reply } from "./render/reply.ts";
import { itemLookup, pathConditions } from "./routing/lookup.ts";
import { deleteItem } from "./methods/delete.ts";
import { getCollection, getItem } from "./methods/get.ts";
import { home } from "./endpoints/home.ts";
import { deleteCollection, operatorSchemas, patchCollection, patchItemMethod } from "./methods/opt-in-loader.ts";
import { postCollection } from "./methods/post.ts";
import { putItem } from "./methods/put.ts";
import { UniqueClaims } from "./methods/unique-claims.ts";
import { overriddenMethod } from "./http/method-override.ts";
import { applyCors, compileCors, type CorsPolicy } from "./render/cors.ts";
import { isValidJsonpCallback } from "./render/jsonp.ts";
import { answersCompactJson, compileRendering, errorReply, renderReply, type Rendering } from "./render/respond.ts";
import { ASSET_GROUP, compileRouter, PROBE_GROUP, type CompiledRouter } from "./routing/router.ts";
import { packageFiles, type ExplorerFiles } from "./openapi/explorer.ts";
import type { OpenApiDocument } from "./openapi/document.ts";
import { normalizeSettings, type Config, type Resource } from "./settings/normalize.ts";
import type { Settings } from "./settings/types.ts";
import { validateSettings } from "./settings/validate.ts";
// Not through validation/index.ts: that would tie the schema exporter (OpenAPI's, loaded on
// demand) to every bundle of the app.
import { compileValidator, type ValidationEngine } from "./validation/validator.ts";
import type { ValidatorExtensions } from "./validation/extensions.ts";
import type { ResourceValidator } from "./validation/types.ts";
import type { Services } from "./services.ts";

export interface HandlerOptions {
  /** `{event: callback | callback[]}`, Eve's event names. More can be added with `app.on`. */
  hooks?: HookMap;
  /** A driver instance to use instead of one built from DB_URI / DB_DRIVER. */
  driver?: Driver;
  /** Runtime services (file access for the journal, fetch) injected by the adapter. */
  services?: RuntimeServices;
  /** Custom rules, types, coercers and default setters for validation. */
  validation?: ValidatorExtensions;
  /** Which validation engine runs (both give the same results; closures are faster). */
  validationEngine?: ValidationEngine;
  /** Additional document features, run after the built-in ones. */
  features?: DocumentFeature[];
  logger?: Logger;
  /** Where ACCESS_LOG lines go (one string per request); console.log by default. */
  accessLog?: (line: string) => void;
  /** Where rate-limit counts live, instead of the store RATE_LIMIT_STORE names (docs/deploy.md). */
  rateLimitStore?: RateLimitStore;
  /**
   * The runtime keeps each request's work to itself (Cloudflare Workers, set by
   * adapters/workers.ts): change streams then each poll the log from their own request.
   */
  isolatedRequests?: boolean;
}

type MethodHandler = (services: Services, ctx: RequestContext, lookup: Filter) => Promise<Reply>;

// Each HTTP method reads what it needs of the request and calls the internal core of
// src/methods (getInternal, patchInternal, …); where it needs nothing beyond the call's scope
// (a collection delete), the core is the method. PATCH and DELETE may lead to the opt-in writes
// (methods/opt-in-loader.ts).
const COLLECTION_METHODS: Record<string, MethodHandler> = {
  GET: getCollection,
  HEAD: getCollection,
  POST: (services, ctx) => postCollection(services, ctx),
  PATCH: patchCollection,
  DELETE: deleteCollection,
};

const ITEM_METHODS: Record<string, MethodHandler> = {
  GET: getItem,
  HEAD: getItem,
  PATCH: patchItemMethod,
  PUT: putItem,
  DELETE: deleteItem,
};

/** A request whose path no route matched: its metrics name no endpoint. */
const UNROUTED: Endpoint = { kind: "home" };

/** The operations Eve's log records (INFO), besides errors. */
const LOGGED_WRITES = new Set(["POST", "PATCH", "PUT"]);

export class App {
  readonly config: Config;
  readonly hooks = new Hooks();
  readonly data: DataLayer;
  readonly features: FeaturePipeline;
  readonly validators = new Map<string, ResourceValidator>();
  readonly logger: Logger;
  readonly access: AccessControl;
  /** Server-side access to every resource, internal ones included (docs/internal.md). */
  readonly internal: InternalApi;
  /** Requests in flight, open streams, health, metrics and shutdown (docs/deploy.md). */
  readonly operations: Operations;
  private readonly services: Services;
  private readonly rendering: Rendering;
  private readonly pool: DriverPool;
  private readonly router: CompiledRouter;
  private readonly cors: CorsPolicy | null;
  private readonly explorerFiles: ExplorerFiles;
  /** Writes one ACCESS_LOG line; absent when the access log is off, so it costs nothing then. */
  private readonly accessLog?: Promise<(entry: AccessEntry) => void>;
  /** Built on first request: start-up stays as fast without it. */
  private openApi?: OpenApiDocument;
  /** Whether a request's duration is taken: for the access log or the metrics, when either is on. */
  private readonly timed: boolean;
  private readonly rateLimits: RateLimitStore;
  /** The open change streams (docs/feed.md); null when no resource has change_feed, so a request pays nothing for it. */
  readonly feed: FeedRegistry | null;

  constructor(settings: Settings, options: HandlerOptions = {}) {
    validateSettings(settings);
    this.config = normalizeSettings(settings);
    // compileValidator checks the schema definition first (unknown rules, bad values).
    for (const resource of Object.values(this.config.DOMAIN)) {
      this.validators.set(resource.name, compileValidator(resource, this.config, options.validation, { engine: options.validationEngine }));
    }
    this.logger = options.logger ?? consoleLogger(this.config.LOG_LEVEL);
    const accessFormat = this.config.ACCESS_LOG;
    if (accessFormat) {
      const write = options.accessLog ?? ((line: string) => console.log(line));
      // Imported only when the log is on, so bundles (Workers) that leave it off do not carry it.
      this.accessLog = import("./access-log.ts").then(({ formatAccessLine }) => (entry: AccessEntry) => write(formatAccessLine(accessFormat, entry)));
    }
    this.pool = new DriverPool(this.config, options.services, options.driver);
    this.data = new DataLayer(this.config, this.pool, this.logger);
    this.rateLimits = options.rateLimitStore ?? rateLimitStoreFor(this.config.RATE_LIMIT_STORE, async () => (await this.pool.get(null)).driver, this.logger);
    this.access = new AccessControl(this.config, this.rateLimits);
    this.operations = new Operations(this.config, this.pool, this.rateLimits, this.logger);
    this.timed = Boolean(this.accessLog || this.operations.metrics);
    // Media before versioning: deleting a document's files needs its versions still stored.
    this.features = new FeaturePipeline([
      mediaFeature(this.config, this.data),
      versioningFeature(this.config, this.data),
      ...oplogFeatures(this.config, this.data, this.hooks, this.access, this.logger),
      ...(options.features ?? []),
    ]);
    this.rendering = compileRendering(this.config);
    this.router = compileRouter(this.config);
    this.cors = compileCors(this.config);
    this.explorerFiles = options.services?.explorerFiles ?? packageFiles;
    for (const event of Object.keys(options.hooks ?? {})) checkHookName(event, Object.keys(this.config.DOMAIN));
    this.hooks.register(options.hooks);
    this.services = {
      config: this.config,
      data: this.data,
      hooks: this.hooks,
      features: this.features,
      validators: this.validators,
      operators: operatorSchemas(this.config, this.validators, (resource) => compileValidator(resource, this.config, options.validation, { engine: options.validationEngine })),
      access: this.access,
      rendered: new KeptJson(this.config),
      claims: new UniqueClaims(this.config),
    };
    this.internal = new InternalApi(this.services);
    this.feed = Object.values(this.config.DOMAIN).some((resource) => resource.change_feed)
      ? new FeedRegistry(this.config, this.operations.streams, (error) => this.logger.error("change feed", null, error), options.isolatedRequests)
      : null;
  }

  /** Subscribes a callback to an event (`on_insert`, `on_fetched_item_people`, …). */
  on<E extends HookName>(event: E, callback: HookSignatures[E]): this {
    checkHookName(event, Object.keys(this.config.DOMAIN));
    this.hooks.on(event, callback);
    return this;
  }

  /** Whether the request may read the resource (home and schema listings). */
  canRead(ctx: RequestContext, resource: Resource): Promise<boolean> {
    return this.access.canRead(ctx, resource);
  }

  /**
   * Opens every db prefix's database and the rate-limit store now, so one that cannot be opened (a
   * damaged or locked journal, a missing package or socket, an unreachable Redis) stops start-up
   * instead of failing every request; builds the indexes, reporting one the documents break.
   */
  async open(): Promise<void> {
    // Binding a resource opens the database of its db_prefix.
    await Promise.all([this.pool.open(), ...Object.values(this.config.DOMAIN).map((resource) => this.data.bind(null, resource)), this.rateLimits.open?.()]);
  }

  /** The generator is loaded on first use, so that deployments that never serve it do not load it. */
  private async openApiDocument(): Promise<OpenApiDocument> {
    this.openApi ??= (await import("./openapi/document.ts")).buildOpenApi(this.config);
    return this.openApi;
  }

  /**
   * Ends the service in order (docs/contracts.md §7): open streams end, requests in flight get
   * SHUTDOWN_TIMEOUT to finish — and so do the adapter's connections, when it passes the promise
   * of their closing —, then the databases close (the journal flushed, its lock released).
   */
  close(connections?: Promise<unknown>): Promise<void> {
    return this.operations.close(connections);
  }

  /** allowedMethods per endpoint (endpoints are compiled once) with its Allow header value. */
  private readonly allowedCache = new WeakMap<Endpoint, { methods: string[]; header: string }>();

  private allowedFor(endpoint: Endpoint): { methods: string[]; header: string } {
    let entry = this.allowedCache.get(endpoint);
    if (!entry) {
      const methods = this.allowedMethods(endpoint);
      entry = { methods, header: methods.join(", ") };
      this.allowedCache.set(endpoint, entry);
    }
    return entry;
  }

  /** Methods an endpoint answers, for dispatch, 405's Allow header and CORS. */
  allowedMethods(endpoint: Endpoint): string[] {
    const resource = endpoint.resource;
    let methods: string[];
    if (endpoint.kind === "collection") methods = [...resource!.resource_methods];
    else if (endpoint.kind === "item") {
      const primary = endpoint.lookupField === resource!.item_lookup_field;
      methods = primary ? [...resource!.item_methods] : resource!.item_methods.includes("GET") ? ["GET"] : [];
    } else methods = ["GET"];
    if (methods.includes("GET")) methods.push("HEAD");
    methods.push("OPTIONS");
    return [...new Set(methods)].sort();
  }

  readonly fetch = async (request: Request, env?: unknown, executionCtx?: unknown): Promise<Response> => {
    // The clock only for the access log and the metrics: performance.now() is a call out of JavaScript on Deno (2% of a GET item there).
    const started = this.timed ? performance.now() : 0;
    const param = this.feed ? this.config.CHANGE_FEED_AUTH_PARAM : null;
    if (param) request = streamCredentials(request, param);
    const ctx = new RequestContext(request, this.config.MAX_BODY_SIZE, env, executionCtx);
    const operations = this.operations;
    operations.inFlight++;
    let response: Response;
    try {
      response = await this.handle(ctx);
    } catch (error) {
      response = await this.fail(ctx, error);
    } finally {
      operations.finished();
    }
    if (this.timed) {
      const durationMs = performance.now() - started;
      if (this.accessLog) (await this.accessLog)({ clientIp: ctx.clientIp, method: request.method, target: ctx.sentPath + ctx.query, status: response.status, durationMs });
      if (operations.metrics) (await operations.metrics).observe(ctx.resource?.name ?? "", ctx.endpoint === UNROUTED ? "none" : ctx.endpoint.kind, ctx.method, response.status, durationMs / 1000);
    }
    return response;
  };

  private async handle(ctx: RequestContext): Promise<Response> {
    const config = this.config;
    if (this.operations.closed) throw new HttpError(503, "The service has shut down.", { headers: { "Retry-After": "1" } });
    if (ctx.unreadableUrl) throw new HttpError(400, UNREADABLE_URL);
    const match = this.router.match(ctx.path);
    if (!match) {
      ctx.endpoint = UNROUTED;
      // An unknown path still answers a cross-origin caller readably, with no methods to offer.
      if (this.cors) applyCors(this.cors, ctx.request.headers.get("origin"), "", ctx.responseHeaders);
      throw new HttpError(404);
    }
    ctx.endpoint = match.endpoint;
    ctx.params = match.params;
    // Health and metrics: no CORS, no authentication, no rate limit (docs/contracts.md §7).
    if (match.endpoint.kind === "health" || match.endpoint.kind === "metrics") return this.operations.answer(ctx, match.params[PROBE_GROUP] !== undefined);

    if (ctx.method === "POST" && config.ALLOW_OVERRIDE_HTTP_METHOD) ctx.method = overriddenMethod(ctx.request);
    const { methods: allowed, header: allowHeader } = this.allowedFor(ctx.endpoint);
    if (this.cors) applyCors(this.cors, ctx.request.headers.get("origin"), allowHeader, ctx.responseHeaders);
    if (ctx.method === "OPTIONS") {
      const headers = new Headers(ctx.responseHeaders);
      headers.set("Allow", allowHeader);
      return new Response(null, { status: 200, headers });
    }
    if (!allowed.includes(ctx.method)) throw new HttpError(405, undefined, { headers: { Allow: allowHeader } });
    const jsonp = config.JSONP_ARGUMENT ? ctx.arg(config.JSONP_ARGUMENT) : null;
    if (jsonp !== null && !isValidJsonpCallback(jsonp)) throw new HttpError(400, "Invalid JSONP callback name");
    const admitting = this.access.admit(ctx);
    if (admitting) await admitting;
    if (this.feed && wantsEventStream(ctx.request.headers.get("accept"))) return this.stream(ctx);
    // Reads may then hand over a body they wrote themselves (src/render/kept-json.ts).
    if (ctx.method === "GET" || ctx.method === "HEAD") ctx.compactJson = answersCompactJson(this.rendering, ctx);

    const dispatching = this.dispatch(ctx);
    const reply = dispatching instanceof Promise ? await dispatching : dispatching;
    if (LOGGED_WRITES.has(ctx.method)) this.logger.info(`${ctx.method} ${ctx.resource?.name ?? ctx.path}: ${reply.status}`, ctx);
    const rendering = renderReply(this.rendering, ctx, reply);
    const response = rendering instanceof Promise ? await rendering : rendering;
    return this.hooks.empty ? response : this.emitPost(ctx, response);
  }

  /**
   * Not async: a method's promise is handed on as it is. An async function returning a promise
   * adopts it with two more turns of the microtask queue, on every request.
   */
  private dispatch(ctx: RequestContext): Promise<Reply> | Reply {
    const { kind, resource } = ctx.endpoint;
    if (kind !== "collection" && kind !== "item") return this.dispatchOther(ctx);
    const handler = (kind === "collection" ? COLLECTION_METHODS : ITEM_METHODS)[ctx.method];
    if (!resource || !handler) throw new HttpError(404);
    const lookup = kind === "item" ? itemLookup(ctx, this.config) : pathConditions(ctx, resource, this.config);
    if (!this.hooks.empty) return this.emitPre(ctx, resource, lookup).then(() => handler(this.services, ctx, lookup));
    return handler(this.services, ctx, lookup);
  }

  /** A request for an event stream (docs/feed.md): GET on a collection or item, nothing else. */
  private async stream(ctx: RequestContext): Promise<Response> {
    const { kind, resource } = ctx.endpoint;
    if (ctx.method !== "GET" || !resource || (kind !== "collection" && kind !== "item")) {
      throw new HttpError(406, "text/event-stream is answered only to GET on a collection or an item with a change feed");
    }
    const lookup = kind === "item" ? itemLookup(ctx, this.config) : pathConditions(ctx, resource, this.config);
    if (!this.hooks.empty) await this.emitPre(ctx, resource, lookup);
    // Imported on the first stream: an App that never serves one (or a Worker's first load) does not carry it.
    const { openStream } = await import("./endpoints/feed.ts");
    return openStream(this.services, this.feed!, ctx, lookup, (error) => this.logger.error("change feed", ctx, error));
  }

  /** The endpoints that are not a resource's collection or item. */
  private async dispatchOther(ctx: RequestContext): Promise<Reply> {
    const kind = ctx.endpoint.kind;
    if (kind === "home") return home(this.services, ctx);
    if (kind === "schema") return schemaEndpoint(this.services, ctx);
    if (kind === "media") return serveMedia(this.services, ctx);
    if (kind === "openapi") return { status: 200, body: await this.openApiDocument() };
    if (kind === "docs") {
      const { explorerResponse } = await import("./openapi/explorer-page.ts");
      const raw = await explorerResponse(this.config, ctx.params[ASSET_GROUP], this.explorerFiles);
      if (!raw) throw new HttpError(404);
      return { status: raw.status, body: null, raw };
    }
    throw new HttpError(404);
  }

  /** on_pre_<METHOD>[_<resource>]; callbacks may add conditions to `lookup`. */
  private async emitPre(ctx: RequestContext, resource: Resource, lookup: Filter): Promise<void> {
    const method = ctx.method === "HEAD" ? "GET" : ctx.method;
    const event = `on_pre_${method}`;
    if (!this.hooks.hasForResource(event, resource.name)) return;
    const args = method === "POST" ? [readableRequest(ctx.request, ctx.maxBodySize)] : [readableRequest(ctx.request, ctx.maxBodySize), lookup];
    await this.hooks.emit(event, resource.name, ...args);
    await this.hooks.emit(`${event}_${resource.name}`, ...args);
  }

  private async emitPost(ctx: RequestContext, response: Response): Promise<Response> {
    const resource = ctx.resource;
    if (!resource || (ctx.endpoint.kind !== "collection" && ctx.endpoint.kind !== "item")) return response;
    const event = `on_post_${ctx.method === "HEAD" ? "GET" : ctx.method}`;
    if (!this.hooks.hasForResource(event, resource.name)) return response;
    return afterPostHooks(response, async (payload) => {
      await this.hooks.emit(event, resource.name, ctx.request, payload);
      await this.hooks.emit(`${event}_${resource.name}`, ctx.request, payload);
    });
  }

  private async fail(ctx: RequestContext, error: unknown): Promise<Response> {
    let httpError: HttpError;
    if (error instanceof HttpError && isAnswerStatus(error.status)) httpError = error;
    else if (error instanceof InvalidQueryError || error instanceof DuplicateKeyError) {
      // Refused by the database because of what the client sent: worth a record, not an alarm.
      this.logger.info(`database refused the operation: ${error.message}`, ctx, error);
      httpError = new HttpError(error instanceof InvalidQueryError ? error.status : 409, undefined, { cause: error });
    } else if (error instanceof DatabaseUnavailableError) {
      this.logger.error("database unavailable", ctx, error);
      if (this.operations.metrics) (await this.operations.metrics).databaseError("request");
      httpError = new HttpError(503, undefined, { headers: { "Retry-After": "1" } });
    } else {
      this.logger.error("unhandled error", ctx, error);
      httpError = new HttpError(500);
    }
    try {
      return await renderReply(this.rendering, ctx, errorReply(this.config, httpError));
    } catch (renderError) {
      this.logger.error("error while rendering an error", ctx, renderError);
      return internalErrorResponse();
    }
  }
}
