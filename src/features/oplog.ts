// The operations log (Eve's `oplog_push` and `_init_oplog`): every write to a public resource by
// a method in OPLOG_METHODS leaves an entry in the OPLOG_NAME collection — `r` the endpoint, `o`
// the method, `i` the document id, `_created`/`_updated` the document's time, with OPLOG_AUDIT
// the client's `ip`, the user `u` and, for OPLOG_CHANGE_METHODS, the changes `c`. Callbacks of
// `on_oplog_push(resource, entries)` see the entries before they are stored and may add `extra`.
// OPLOG_ENDPOINT serves the log as a read-only resource; without it the log is internal.
import type { CallScope } from "../scope.ts";
import type { AccessControl } from "../auth/access.ts";
import type { DataLayer } from "../data/layer.ts";
import type { Doc } from "../drivers/types.ts";
import type { Hooks } from "../events/hooks.ts";
import { now } from "../util/clock.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { displayUrl } from "../settings/urls.ts";
import type { Logger } from "../logging.ts";
import type { DocumentFeature } from "./pipeline.ts";

class OplogFeature implements DocumentFeature {
  private readonly methods: Set<string>;
  private readonly changeMethods: Set<string>;

  constructor(
    private readonly config: Config,
    private readonly data: DataLayer,
    private readonly hooks: Hooks,
    private readonly access: AccessControl,
  ) {
    this.methods = new Set(config.OPLOG_METHODS);
    this.changeMethods = new Set(config.OPLOG_CHANGE_METHODS);
  }

  /** Internal resources (the log among them) have no endpoint to name, so Eve logs none of them. */
  appliesTo(resource: Resource): boolean {
    return !resource.internal_resource && resource.name !== this.config.OPLOG_NAME;
  }

  afterInsert(ctx: CallScope, resource: Resource, documents: Doc[]) {
    return this.push(ctx, resource, "POST", documents.map((document) => ({ document })));
  }

  afterReplace(ctx: CallScope, resource: Resource, document: Doc) {
    return this.push(ctx, resource, "PUT", [{ document }]);
  }

  afterUpdate(ctx: CallScope, resource: Resource, updates: Doc, _updated: Doc, original: Doc) {
    return this.push(ctx, resource, "PATCH", [{ document: updates, id: original[resource.id_field] }]);
  }

  afterDelete(ctx: CallScope, resource: Resource, original: Doc) {
    return this.push(ctx, resource, "DELETE", [{ document: original }]);
  }

  afterSoftDelete(ctx: CallScope, resource: Resource, marked: Doc) {
    return this.push(ctx, resource, "DELETE", [{ document: marked }]);
  }

  private async push(ctx: CallScope, resource: Resource, op: string, writes: Array<{ document: Doc; id?: unknown }>): Promise<void> {
    const config = this.config;
    if (!this.methods.has(op)) return;
    const log = config.DOMAIN[config.OPLOG_NAME]!;
    const entries = writes.map(({ document, id }) => {
      const time = document[config.LAST_UPDATED] ?? now();
      const entry: Doc = { r: displayUrl(resource.url), o: op, i: document[resource.id_field] ?? id, [config.LAST_UPDATED]: time, [config.DATE_CREATED]: time };
      if (config.OPLOG_AUDIT) {
        entry.ip = ctx.clientIp;
        entry.u = this.access.authFor(resource) ? ctx.user : "n/a";
        if (this.changeMethods.has(op)) {
          const { [config.ETAG]: _etag, [config.LAST_UPDATED]: _updated, ...changes } = document;
          entry.c = changes;
        }
      }
      // User-restricted access to the log: each entry belongs to the user who wrote it.
      if (log.auth_field && ctx.requestAuthValue != null) entry[log.auth_field] = ctx.requestAuthValue;
      return entry;
    });
    await this.hooks.emit("on_oplog_push", resource.name, entries);
    await this.data.insert(ctx, log, entries);
  }
}

/**
 * The oplog as a document feature; nothing at all when OPLOG is off. Served to anyone while it
 * logs resources that have authentication, the log would show their writes (and, with
 * OPLOG_AUDIT, their content) around it: Eve serves it so too, so start-up says so rather than
 * refuse settings that port as they are (docs/endpoints.md, "Oplog").
 */
export function oplogFeatures(config: Config, data: DataLayer, hooks: Hooks, access: AccessControl, logger: Logger): DocumentFeature[] {
  if (!config.OPLOG) return [];
  const log = config.DOMAIN[config.OPLOG_NAME]!;
  const unguarded = !access.authFor(log);
  if (!log.internal_resource && (unguarded || log.public_methods.includes("GET"))) {
    // Aggregation endpoints take no writes: nothing of theirs is logged.
    const guarded = Object.values(config.DOMAIN).filter((r) => r !== log && !r.internal_resource && !r.datasource.aggregation && access.authFor(r));
    if (guarded.length > 0) {
      const fix = unguarded
        ? `give DOMAIN['${config.OPLOG_NAME}'] an authentication of its own (and an auth_field), or set AUTH`
        : "take GET out of its public_methods";
      logger.warning(
        `OPLOG_ENDPOINT: anyone may read the log, which records the writes to ${guarded.map((resource) => `'${resource.name}'`).join(", ")}, ` +
          `resources that need authentication: ${fix}`,
      );
    }
  }
  return [new OplogFeature(config, data, hooks, access)];
}
