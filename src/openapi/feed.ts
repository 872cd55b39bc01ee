// The change feed in the OpenAPI document (docs/feed.md): a resource with change_feed answers
// its collection and item GETs with `text/event-stream` too. OpenAPI 3.1 has no schema for a
// stream of events, so the body is described as text and each event's `data:` under
// `x-events` (an extension every tool ignores or shows as it is), with the Last-Event-ID
// header and the credential parameter a browser's EventSource uses.
import type { Config, Resource } from "../settings/normalize.ts";
import type { JsonSchema } from "../validation/index.ts";
import { ref } from "./components.ts";
import type { Parameter } from "./parameters.ts";

/** Whether a resource's GETs also stream. */
export function streams(resource: Resource): boolean {
  return resource.change_feed && !resource.datasource.aggregation;
}

/** The `text/event-stream` media type of a GET that streams `document` (a schema name). */
export function eventStream(config: Config, resource: Resource, document: string): Record<string, unknown> {
  const gone: JsonSchema = { type: "object", properties: { [resource.id_field]: {}, ...(config.IF_MATCH ? { [config.ETAG]: { type: "string" } } : {}) } };
  const reason = (reasons: string[]): JsonSchema => ({ type: "object", properties: { reason: { type: "string", enum: reasons } }, required: ["reason"] });
  return {
    "text/event-stream": {
      schema: {
        type: "string",
        description:
          "Server-Sent Events (with Accept: text/event-stream), one per committed change, each with an `id:` to resume from (Last-Event-ID). " +
          "`data:` is the document as GET on its item shows it (insert, update, replace, and enter: it now matches the stream's filter), " +
          "or its id and ETag (delete, and leave: it no longer matches). `reset` says the position is older than the log keeps; `end` is the last event of a stream the server ends.",
      },
      "x-events": {
        insert: ref(document),
        update: ref(document),
        replace: ref(document),
        enter: ref(document),
        delete: gone,
        leave: gone,
        reset: reason(["expired"]),
        end: reason(["shutdown", "slow reader", "error"]),
      },
    },
  };
}

/** Last-Event-ID, and the credential a browser's EventSource sends as a query parameter. */
export function streamParameters(config: Config): Parameter[] {
  const parameters: Parameter[] = [
    { name: "Last-Event-ID", in: "header", required: false, description: "with text/event-stream: resume after this event's id", schema: { type: "string" } },
  ];
  if (config.CHANGE_FEED_AUTH_PARAM) {
    parameters.push({
      name: config.CHANGE_FEED_AUTH_PARAM,
      in: "query",
      required: false,
      description: "with text/event-stream: the credential (a token, or `Basic …`), for clients that cannot set Authorization; never logged",
      schema: { type: "string" },
    });
  }
  return parameters;
}
