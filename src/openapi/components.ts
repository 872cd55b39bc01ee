// The parts of the OpenAPI document every resource shares: Eve's envelopes (links, paging meta,
// the error and validation-error bodies) and the error responses, under the names the settings
// give their keys (STATUS, ERROR, ISSUES, LINKS, …).
import type { Config } from "../settings/normalize.ts";
import type { JsonSchema } from "../validation/index.ts";

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const responseRef = (status: number | "validation") => ({ $ref: `#/components/responses/${status}` });

/** Every error status the document describes, with what it means in everest. */
export const ERROR_STATUSES: Record<number, string> = {
  400: "Bad request: a malformed query parameter, body or header",
  401: "Authentication required: no or wrong credentials",
  403: "Forbidden: the credentials do not allow this",
  404: "Not found",
  405: "Method not allowed here (the Allow header lists those that are)",
  406: "None of the Accept header's types can be served",
  409: "Conflict: a document with this id exists already",
  412: "Precondition failed: If-Match does not match the document's current ETag",
  428: "Precondition required: send the document's ETag in If-Match",
  429: "Too many requests (the X-RateLimit-* headers say when to retry)",
  503: "The database is unavailable",
};

const LINK: JsonSchema = {
  type: "object",
  properties: { href: { type: "string" }, title: { type: "string" } },
  required: ["href"],
};

export function sharedSchemas(config: Config): Record<string, JsonSchema> {
  const errorBody = {
    type: "object",
    properties: {
      code: { type: "integer" },
      message: { type: "string" },
    },
    required: ["code", "message"],
  };
  return {
    Link: LINK,
    Links: {
      type: "object",
      description: "HATEOAS links: self, parent, collection, on pages next, prev and last, and related: the documents a document refers to",
      properties: {
        related: { type: "object", additionalProperties: { anyOf: [ref("Link"), { type: "array", items: ref("Link") }] } },
      },
      additionalProperties: { anyOf: [ref("Link"), { type: "array", items: ref("Link") }] },
    },
    Meta: {
      type: "object",
      description: "Paging: the page served, its size, and (unless counting is off) the total",
      properties: { page: { type: "integer" }, max_results: { type: "integer" }, total: { type: "integer" } },
    },
    Error: {
      type: "object",
      properties: { [config.STATUS]: { const: config.STATUS_ERR }, [config.ERROR]: errorBody },
      required: [config.STATUS, config.ERROR],
    },
    Issues: {
      type: "object",
      description: "Field name → what is wrong with it (a message, a list of them, or the issues of a sub-document)",
      additionalProperties: {},
    },
    ValidationError: {
      type: "object",
      description: `The document did not validate; a bulk insert lists each document's outcome in ${config.ITEMS}`,
      properties: {
        [config.STATUS]: { const: config.STATUS_ERR },
        [config.ERROR]: errorBody,
        [config.ISSUES]: ref("Issues"),
        [config.ITEMS]: {
          type: "array",
          items: { type: "object", properties: { [config.STATUS]: { type: "string" }, [config.ISSUES]: ref("Issues") } },
        },
      },
      required: [config.STATUS],
    },
  };
}

/** `content` for a JSON body (also served as XML when the renderers allow it). */
export function jsonContent(schema: JsonSchema, config: Config): Record<string, { schema: JsonSchema }> {
  const content: Record<string, { schema: JsonSchema }> = { "application/json": { schema } };
  if (config.RENDERERS.some((r) => /xml/i.test(r))) content["application/xml"] = { schema: { type: "string", description: "the same body as XML" } };
  return content;
}

export function sharedResponses(config: Config): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(ERROR_STATUSES)) {
    responses[status] = { description, content: jsonContent(ref("Error"), config) };
  }
  responses.validation = { description: "Validation failed: the issues are listed per field", content: jsonContent(ref("ValidationError"), config) };
  return responses;
}
