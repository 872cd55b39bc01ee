// POST on a collection (Eve's eve/methods/post.py): one document or a list, all-or-nothing.
import { ObjectId } from "bson";
import type { RequestContext } from "../context.ts";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import { DuplicateKeyError, type Doc } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import type { Issues, ValidationEnv, ValidationResult } from "../validation/types.ts";
import { documentEtag } from "../render/etag.ts";
import { resourceLink } from "../render/hateoas.ts";
import { shadowByName } from "../features/shadow.ts";
import type { Reply } from "../render/reply.ts";
import { readPayload } from "../request/payload.ts";
import { pathFields } from "../routing/lookup.ts";
import { authFieldFilter } from "../auth/access.ts";
import { now } from "../util/clock.ts";
import { isPlainObject } from "../util/objects.ts";
import { pyStr } from "../validation/pyrepr.ts";
import { MESSAGES } from "../validation/errors.ts";
import { writeResponse } from "./bandwidth.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { absoluteUrl, pathSegment } from "../http/plain-path.ts";
import { objectIdHex } from "../util/objectid.ts";
import { fieldMask, pathVisibility, type Mask } from "../auth/field-masks.ts";
import { checkWritable } from "../auth/field-writes.ts";

/** `uniqueByIndex`: the unique fields a POST leaves to the store's index (see uniqueByIndex below). */
export function validationEnv(services: Services, ctx: CallScope, original?: Doc, uniqueByIndex?: ReadonlySet<string>): ValidationEnv {
  return {
    config: services.config,
    resource: ctx.resource!,
    original,
    uniqueByIndex,
    requestAuthValue: ctx.requestAuthValue,
    findOne: async (name, filter, options) => {
      const resource = services.config.DOMAIN[name] ?? shadowByName(services.config, name);
      if (!resource) throw new Error(`unknown resource '${name}'`);
      return services.data.findOne(ctx, resource, filter, { showDeleted: options?.includeDeleted ?? false, projection: null, wholeCollection: options?.ignoreFilter });
    },
  };
}

/**
 * The issue Eve reports for a unique value the database refused; without the value for a field
 * the caller may not read (another field's change can clash on a compound index holding it).
 */
export function duplicateIssues(error: DuplicateKeyError, hidden: Mask | null): Issues {
  const issues: Issues = {};
  for (const [field, value] of Object.entries(error.keyValue)) {
    issues[field] = hidden && pathVisibility(hidden, field) !== "shown" ? "value is not unique" : MESSAGES.notUnique(value);
  }
  return issues;
}

function insertionFailure(config: Config, results: Array<{ issues?: Issues }>): HttpError {
  const failures = results.filter((r) => r.issues).length;
  const status = config.VALIDATION_ERROR_STATUS;
  const entries = results.map((r) => (r.issues ? { [config.STATUS]: config.STATUS_ERR, [config.ISSUES]: r.issues } : { [config.STATUS]: config.STATUS_OK }));
  const body: Doc = entries.length === 1 ? entries[0]! : { [config.STATUS]: config.STATUS_ERR, [config.ITEMS]: entries };
  body[config.ERROR] = { code: status, message: `Insertion failure: ${failures} document(s) contain(s) error(s)` };
  return new HttpError(status, undefined, { body });
}

/** The document of the batch holding the value the unique index refused, reported for it. */
function duplicateFailure(config: Config, error: DuplicateKeyError, documents: Doc[], hidden: Mask | null): HttpError {
  const [field, value] = Object.entries(error.keyValue)[0] ?? [];
  const clash = documents.findIndex((d) => field !== undefined && String(d[field]) === String(value));
  return insertionFailure(config, documents.map((_, i) => (i === clash || (clash < 0 && i === 0) ? { issues: duplicateIssues(error, hidden) } : {})));
}

/**
 * The unique fields whose check can be left to the store's unique index at insert time: those
 * whose index the store keeps (Bound.uniqueIndexed), and none when an on_insert hook or a
 * document feature could change a document or act outside it between validation and the
 * insert (a refused insert must leave nothing behind).
 */
function uniqueByIndex(services: Services, resource: Resource, fields: ReadonlySet<string>): ReadonlySet<string> | undefined {
  if (fields.size === 0 || services.hooks.hasForResource("on_insert", resource.name)) return undefined;
  return services.features.keepsInserts(resource) ? fields : undefined;
}

/** The HTTP method: the request body, handed to the core. */
export async function postCollection(services: Services, ctx: RequestContext): Promise<Reply> {
  return postInternal(services, ctx, await readPayload(ctx, services.config));
}

/** Eve's post_internal: one document or a list, the core that POST, PUT's upsert and server code share. */
export async function postInternal(services: Services, ctx: CallScope, payload: unknown): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  if (!Array.isArray(payload) && !isPlainObject(payload)) throw new HttpError(400, "The request body must be a JSON object or a list of them");
  const items = (Array.isArray(payload) ? payload : [payload]) as unknown[];
  if (items.length === 0) throw new HttpError(400, "Empty bulk insert");
  if (items.length > 1 && !resource.bulk_enabled) throw new HttpError(400, "Bulk insert not allowed");
  const path = pathFields(ctx, resource, config);
  // A URL naming another user's documents is refused as a GET of it is, not stored as the caller's.
  if (resource.auth_field) authFieldFilter(ctx, resource, { ...path.declared, ...path.undeclared });
  // Validation works on its own copy, so the client's documents are only copied to add path values.
  const declared = Object.keys(path.declared).length > 0;
  const documentsOnly = (items.length === 1 && isPlainObject(items[0]) ? items : items.filter(isPlainObject)) as Doc[];
  let incoming = declared ? documentsOnly.map((item) => ({ ...item, ...path.declared })) : documentsOnly;
  const validator = services.validators.get(resource.name)!;
  if (resource.field_rules) {
    // Judged as they will be stored: `{"profile.ssn": …}` sets profile's ssn.
    incoming = incoming.map((document) => validator.expanded(document));
    // Nothing is validated (no lookup made) for a request that sets a field it may not write.
    for (const document of incoming) checkWritable(ctx, resource, document);
  }
  const validateAll = (env: ValidationEnv): ValidationResult[] | Promise<ValidationResult[]> => {
    if (incoming.length !== 1) return validator.validateMany(incoming, env);
    const validating = validator.validate(incoming[0]!, "POST", env);
    return validating instanceof Promise ? validating.then((result) => [result]) : [validating];
  };
  const refusal = (results: ValidationResult[]): HttpError | null => {
    if (incoming.length === items.length && results.every((r) => r.valid)) return null;
    // A list item that is no document fails on its own, in Cerberus' words, as in Eve.
    let next = 0;
    const outcomes = items.map((item) => {
      if (!isPlainObject(item)) return { issues: { "validation exception": item === null ? "document is missing" : `'${pyStr(item)}' is not a document, must be a dict` } };
      const result = results[next++]!;
      return result.valid ? {} : { issues: result.issues };
    });
    return insertionFailure(config, outcomes);
  };
  const binding = services.data.bind(ctx, resource);
  const byIndex = uniqueByIndex(services, resource, (binding instanceof Promise ? await binding : binding).uniqueIndexed);
  // Held from the lookups of `unique` to the insert where no index guards it (unique-claims.ts).
  const held = services.claims.hold(resource, incoming);
  const release = held && (await held);
  let documents: Doc[];
  try {
    const validated = validateAll(validationEnv(services, ctx, undefined, byIndex));
    const results = validated instanceof Promise ? await validated : validated;
    const refused = refusal(results);
    if (refused) throw refused;

    const stamp = now();
    documents = results.map((r) => {
      // The validated document is validation's own copy: completed in place.
      const document = Object.assign(r.document, path.undeclared);
      document[config.LAST_UPDATED] = stamp;
      document[config.DATE_CREATED] = stamp;
      if (resource.soft_delete) document[config.DELETED] = false;
      if (resource.auth_field && ctx.requestAuthValue != null) document[resource.auth_field] = ctx.requestAuthValue;
      return document;
    });
    const beforeInsert = services.features.run("beforeInsert", ctx, resource, documents);
    if (beforeInsert) await beforeInsert;
    const onInsert = services.hooks.emitForResource("on_insert", resource.name, documents);
    if (onInsert) await onInsert;
    for (const document of documents) {
      // Eve hashes the document before the database assigns its id.
      if (config.IF_MATCH) document[config.ETAG] = documentEtag(document, resource.etag_ignore_fields);
      if (document._id === undefined) document._id = new ObjectId();
    }
    try {
      await services.data.insert(ctx, resource, documents);
    } catch (error) {
      if (!(error instanceof DuplicateKeyError)) throw error;
      // An id that already exists is a conflict, as in Eve (pymongo's DuplicateKeyError → 409).
      if ("_id" in error.keyValue || resource.id_field in error.keyValue) throw new HttpError(409, undefined, { cause: error });
      // The index answered what validation left to it: validated again with the lookups, the
      // failure reads as it would have (every document's issues); nothing was stored.
      const hidden = fieldMask(ctx, resource, "read");
      if (byIndex) throw refusal(await validateAll(validationEnv(services, ctx))) ?? duplicateFailure(config, error, documents, hidden);
      throw duplicateFailure(config, error, documents, hidden);
    }
  } finally {
    if (release) release();
  }
  // A document without its id field is named by its database id, as Eve names it.
  for (const document of documents) if (!(resource.id_field in document)) document[resource.id_field] = document._id;
  const afterInsert = services.features.run("afterInsert", ctx, resource, documents);
  if (afterInsert) await afterInsert;

  const responses: Doc[] = [];
  for (const document of documents) {
    const answer = writeResponse(services, ctx, resource, document);
    responses.push(answer instanceof Promise ? await answer : answer);
  }
  const onInserted = services.hooks.emitForResource("on_inserted", resource.name, documents);
  if (onInserted) await onInserted;

  const first = documents[0]![resource.id_field];
  const itemPath = `${services.config.basePath}/${resourceLink(config, ctx)}/${first instanceof ObjectId ? objectIdHex(first) : pathSegment(String(first))}`;
  // Server calls (src/internal.ts) have no origin; their answer carries no headers anyway.
  const location = ctx.origin ? absoluteUrl(ctx.origin, itemPath) : itemPath;
  // Eve answers a one-document list like a single document.
  const body = responses.length === 1 ? responses[0]! : { [config.STATUS]: config.STATUS_OK, [config.ITEMS]: responses };
  return { status: 201, body, headers: { Location: location } };
}
