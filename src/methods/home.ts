// The API entry point: one child link per visible resource (Eve's home_endpoint).
import type { RequestContext } from "../context.ts";
import type { Reply } from "./common.ts";

export function home(ctx: RequestContext): Reply {
  const config = ctx.app.config;
  if (!config.HATEOAS) return { status: 200, body: {} };
  const child = Object.values(config.DOMAIN)
    .filter((resource) => !resource.internal_resource && ctx.app.canRead(ctx, resource))
    .map((resource) => ({ href: resource.url, title: resource.resource_title }));
  if (config.SCHEMA_ENDPOINT) child.push({ href: String(config.SCHEMA_ENDPOINT), title: String(config.SCHEMA_ENDPOINT) });
  return { status: 200, body: { [config.LINKS]: { child } } };
}
