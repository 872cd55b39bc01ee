// The API entry point: one child link per visible resource (Eve's home_endpoint).
import type { RequestContext } from "../context.ts";
import { EVEREST_VERSION } from "../version.ts";
import type { Services } from "../services.ts";
import type { Reply } from "../render/reply.ts";
import { displayUrl } from "../settings/urls.ts";

export async function home(services: Services, ctx: RequestContext): Promise<Reply> {
  const config = services.config;
  const body: Record<string, unknown> = {};
  // Eve's INFO block names the server and its version (and API_VERSION when set).
  if (config.INFO) body[config.INFO] = { server: "everest", version: EVEREST_VERSION, ...(config.API_VERSION ? { api_version: config.API_VERSION } : {}) };
  if (!config.HATEOAS) return { status: 200, body };
  const child: Array<{ href: string; title: string }> = [];
  for (const resource of Object.values(config.DOMAIN)) {
    if (!resource.internal_resource && (await services.access.canRead(ctx, resource))) child.push({ href: displayUrl(resource.url), title: resource.resource_title });
  }
  if (config.SCHEMA_ENDPOINT) child.push({ href: String(config.SCHEMA_ENDPOINT), title: String(config.SCHEMA_ENDPOINT) });
  body[config.LINKS] = { child };
  return { status: 200, body };
}
