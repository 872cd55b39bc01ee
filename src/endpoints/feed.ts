// GET with `Accept: text/event-stream` on a collection or an item of a resource with
// change_feed (docs/feed.md): its query is checked as a GET's is (`where` in both syntaxes,
// allowed filters, projection, embedded), the data layer's scope is added (datasource filter, the caller's
// own documents, soft delete), Last-Event-ID is checked, and only then is the stream answered.
// Every refusal comes before the first byte, in Eve's envelope. Loaded with the first stream
// request (src/app.ts), with the hub, the streams and their rendering.
import type { RequestContext } from "../context.ts";
import type { Services } from "../services.ts";
import { combineFilters } from "../data/layer.ts";
import { compileFilter, loadFor } from "../drivers/memory/mingo.ts";
import { InvalidPositionError, type Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { parseWhere } from "../query/where.ts";
import { fieldMask } from "../auth/field-masks.ts";
import { readProjection } from "../methods/get.ts";
import { resolveEmbeddedFields } from "../read/embedding.ts";
import { renderChange, renderKeyOf, type Subscription } from "../feed/events.ts";
import { Hub } from "../feed/hub.ts";
import type { FeedRegistry } from "../feed/registry.ts";
import { EVENT_STREAM, sseOpening } from "../feed/sse.ts";
import { FeedStream } from "../feed/stream.ts";

export async function openStream(services: Services, registry: FeedRegistry, ctx: RequestContext, lookup: Filter, onError: (error: unknown) => void): Promise<Response> {
  const resource = ctx.resource!;
  const config = services.config;
  if (!resource.change_feed || resource.datasource.aggregation) throw new HttpError(406, `${resource.name} has no change feed: ask for JSON or XML`);
  registry.admit();
  // A field the caller may not read is unknown to its where and projection, as on a GET.
  const hidden = fieldMask(ctx, resource, "read");
  const rawWhere = ctx.arg(config.QUERY_WHERE);
  const where = rawWhere ? await parseWhere(rawWhere, resource, config, hidden) : {};
  const { projection, project } = readProjection(config, ctx, resource, hidden);
  const embedded = resolveEmbeddedFields(config, ctx, resource);
  const item = ctx.endpoint.kind === "item";
  // An item is watched through the same filter as a collection: it stays what a GET would find.
  if (item && !(await services.data.findOne(ctx, resource, lookup, { projection: { _id: 1 } }))) throw new HttpError(404);
  const filter = services.data.scope(ctx, resource, { userFilter: combineFilters(lookup, where) });
  const loading = loadFor({ filter });
  if (loading) await loading;
  const matches = compileFilter(filter);

  const binding = services.data.bind(ctx, resource);
  const { driver, target } = binding instanceof Promise ? await binding : binding;
  const changes = driver.changes!;
  const hub = registry.hub(driver, target.database, (timing, failed) => new Hub(changes, target.database, timing, failed));
  const lastEventId = ctx.request.headers.get("last-event-id")?.trim() || null;
  let position: string;
  try {
    if (lastEventId !== null) await hub.check(lastEventId);
    position = lastEventId ?? (await hub.start());
  } catch (error) {
    if (error instanceof InvalidPositionError) throw new HttpError(400, `Last-Event-ID: ${error.message}`);
    throw error;
  }

  // From here on the scope only renders events, whose media fields are links, never bytes.
  ctx.mediaAsUrl = true;
  const subscription: Subscription = { services, ctx, resource, matches, projection, project, embedded, renderKey: renderKeyOf(services, ctx, resource, projection, project, embedded) };
  const stream = new FeedStream(position, sseOpening(config.CHANGE_FEED_RETRY), (record) => renderChange(subscription, record), config.CHANGE_FEED_BUFFER, onError);
  registry.add(stream);
  // Node, Deno and Bun cancel the body of a response whose client went away, which ends the
  // stream; workerd only aborts the request's signal (with enable_request_signal). Asked for
  // there alone: on Node it would build a whole Request per stream.
  if (registry.isolated) ctx.request.signal?.addEventListener("abort", () => stream.end("error"), { once: true });
  hub.join(stream).catch((error: unknown) => {
    onError(error);
    stream.end("error");
  });
  const headers = new Headers(ctx.responseHeaders as Record<string, string>);
  headers.set("Content-Type", `${EVENT_STREAM}; charset=utf-8`);
  headers.set("Cache-Control", "no-cache");
  // nginx buffers a proxied response unless told not to; an event stream must not wait in a buffer.
  headers.set("X-Accel-Buffering", "no");
  return new Response(stream.body, { status: 200, headers });
}
