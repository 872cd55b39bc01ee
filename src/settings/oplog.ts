// The operations log's resource, as settings define it (the log itself is src/features/oplog.ts).
import type { GlobalConfig } from "./defaults.ts";
import type { ResourceSettings, Schema } from "./types.ts";

/**
 * The log's resource definition: what DOMAIN says of OPLOG_NAME (its authentication, say), made
 * read-only, with Eve's fixed schema (`extra` only with OPLOG_RETURN_EXTRA_FIELD, the audit
 * fields only with OPLOG_AUDIT).
 */
export function oplogDefinition(globals: GlobalConfig, own: ResourceSettings = {}): ResourceSettings {
  const name = globals.OPLOG_NAME;
  const endpoint = globals.OPLOG_ENDPOINT;
  const schema: Schema = { r: {}, o: {}, i: {} };
  if (globals.OPLOG_RETURN_EXTRA_FIELD) schema.extra = {};
  if (globals.OPLOG_AUDIT) Object.assign(schema, { ip: {}, c: {}, u: {} });
  return {
    ...own,
    datasource: own.datasource ?? { source: name },
    resource_methods: ["GET"],
    item_methods: ["GET"],
    url: endpoint ? (own.url ?? endpoint) : name,
    internal_resource: !endpoint,
    schema,
  };
}
