// PATCH on an item (Eve's eve/methods/patch.py): validated partial update, nested merge,
// written atomically against the ETag the client holds.
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import { DuplicateKeyError, type Doc, type Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { documentEtag } from "../render/etag.ts";
import { keepsUnique } from "../settings/rule-types.ts";
import type { FieldSchema } from "../settings/types.ts";
import { valueAt } from "../validation/walk.ts";
import { duplicateIssues, validationEnv } from "./post.ts";
import type { Reply } from "../render/reply.ts";
import { requireDocument, type PayloadSource } from "../request/payload.ts";
import { keepPathValues } from "../routing/lookup.ts";
import { now } from "../util/clock.ts";
import { writeResponse } from "./bandwidth.ts";
import { setMerged } from "./merged-paths.ts";
import { checkImmutableId, conditionalWriteFailed, loadOriginal, writeCondition, itemWriteMethod, requiredEtag, type Precondition } from "./conditional.ts";
import { isPlainObject, withoutKey } from "../util/objects.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import type { Issues, ValidationResult } from "../validation/types.ts";
import { fieldMask } from "../auth/field-masks.ts";
import { checkWritable, keepUnwritable, restoreKept, withoutKeptIssues, type Kept } from "../auth/field-writes.ts";


/** Eve's `resolve_nested_documents`: sub-documents merge into the stored ones, recursively. */
export function mergeNested(original: Doc, updates: Doc): Doc {
  const merged: Doc = { ...original };
  for (const key of Object.keys(updates)) {
    const value = updates[key];
    merged[key] = isPlainObject(value) && isPlainObject(original[key]) ? mergeNested(original[key] as Doc, value) : value;
  }
  return merged;
}

/** The validation failure body of PATCH and PUT: `_issues` and `_status`, no `_error`. */
export function validationFailure(config: Config, issues: unknown): HttpError {
  return new HttpError(config.VALIDATION_ERROR_STATUS, undefined, { body: { [config.ISSUES]: issues, [config.STATUS]: config.STATUS_ERR } });
}

/** The unique index refused a value the validator's query did not catch (a concurrent writer). */
export function duplicateFailure(config: Config, ctx: CallScope, error: DuplicateKeyError): HttpError {
  return validationFailure(config, duplicateIssues(error, fieldMask(ctx, ctx.resource!, "read")));
}

/**
 * Validates what a PATCH or PUT sets, under the field rules (src/auth/field-writes.ts): refused
 * with a 403 when it sets a field the caller may not write; such fields' stored values kept.
 * Issues are a 422, or handed to `collect` (update operators report theirs beside them).
 */
export function validateWrite(services: Services, ctx: CallScope, sent: Doc, original: Doc, mode: "PATCH" | "PUT", collect?: (issues: Issues) => void, keep: Keep = "stored"): Doc | Promise<Doc> {
  const resource = ctx.resource!;
  const validator = services.validators.get(resource.name)!;
  // The creation date is the server's: a PATCH leaves it as stored, as a PUT keeps it.
  const created = services.config.DATE_CREATED;
  const own = mode === "PATCH" && Object.hasOwn(sent, created) ? withoutKey(sent, created) : sent;
  // Judged as it will be stored: `{"profile.ssn": …}` sets profile's ssn.
  const payload = resource.field_rules ? validator.expanded(own) : own;
  const mask = resource.field_rules && checkWritable(ctx, resource, payload, original);
  const kept = mask && keepUnwritable(mask, payload, original, mode === "PUT");
  const validating = validator.validate(kept ? kept.document : payload, mode, validationEnv(services, ctx, original));
  // Not async: a document with nothing to wait for is validated without a promise (src/validation/validator.ts).
  if (validating instanceof Promise) return validating.then((result) => validated(services.config, result, original, kept, collect, keep));
  return validated(services.config, validating, original, kept, collect, keep);
}

/**
 * What becomes of the values a write keeps of fields the caller may not write: "stored", put back
 * from the original; "none", left out, where one update goes to many documents (a write by
 * filter) and each must keep its own.
 */
export type Keep = "stored" | "none";

function validated(config: Config, result: ValidationResult, original: Doc, kept: Kept | null, collect: ((issues: Issues) => void) | undefined, keep: Keep): Doc {
  const issues = kept ? withoutKeptIssues(result.issues, kept) : result.issues;
  if (kept ? Object.keys(issues).length > 0 : !result.valid) {
    if (!collect) throw validationFailure(config, issues);
    collect(issues);
  }
  if (kept) restoreKept(result.document, keep === "stored" ? original : {}, kept);
  return result.document;
}

/**
 * A soft-deleted document that a PATCH brings back (of an item, with operators, or by filter):
 * the unique values it keeps, those the request does not send, checked again as a PUT's
 * validation checks every field. While it was deleted another document may have taken one
 * (`unique` leaves deleted documents out, and a soft-deleting resource has no unique index to
 * refuse the write; src/data/layer.ts). The issues, as the store reports a duplicate (without
 * the value of a field the caller may not read), or null when it can come back.
 */
export function restoredDuplicates(services: Services, ctx: CallScope, original: Doc, sent: Doc): Promise<Issues | null> | null {
  // Not a restore (nearly every PATCH): no promise at all.
  return ctx.resource!.soft_delete && original[services.config.DELETED] === true ? takenUniques(services, ctx, original, sent) : null;
}

async function takenUniques(services: Services, ctx: CallScope, original: Doc, sent: Doc): Promise<Issues | null> {
  const resource = ctx.resource!;
  const validator = services.validators.get(resource.name)!;
  const kept: Doc = {};
  keptUniques(resource.schema, original, validator.expanded(sent), resource.merge_nested_documents, "", kept);
  if (Object.keys(kept).length === 0) return null;
  const result = await validator.validate(validator.expanded(kept), "PATCH", validationEnv(services, ctx, original));
  if (result.valid) return null;
  const taken = Object.fromEntries(Object.keys(kept).filter((path) => valueAt(result.issues, path.split(".")) !== null).map((path) => [path, kept[path]]));
  return validator.expanded(duplicateIssues(new DuplicateKeyError(taken), fieldMask(ctx, resource, "read"))) as Issues;
}

/**
 * The unique values `stored` holds that `sent` does not give again, by dotted path, into the
 * sub-documents a unique field may sit in: a sub-document the request sends is merged into the
 * stored one (MERGE_NESTED_DOCUMENTS), so the stored values it does not name come back too.
 */
function keptUniques(schema: Record<string, FieldSchema>, stored: unknown, sent: unknown, merge: boolean, prefix: string, out: Doc): void {
  if (!isPlainObject(stored)) return;
  for (const [field, rules] of Object.entries(schema)) {
    if (!Object.hasOwn(stored, field)) continue;
    const given = isPlainObject(sent) && Object.hasOwn(sent, field) ? { value: sent[field] } : null;
    if (keepsUnique(rules)) {
      if (!given) out[prefix + field] = stored[field];
    } else if (rules.type === "dict" && isPlainObject(rules.schema) && (!given || (merge && isPlainObject(given.value)))) {
      keptUniques(rules.schema as Record<string, FieldSchema>, stored[field], given?.value, merge, `${prefix}${field}.`, out);
    }
  }
}

/** A 422 where the restore of the original would duplicate a unique value (restoredDuplicates). */
export async function checkRestoredUniques(services: Services, ctx: CallScope, original: Doc, sent: Doc): Promise<void> {
  const issues = await restoredDuplicates(services, ctx, original, sent);
  if (issues) throw validationFailure(services.config, issues);
}

/**
 * Whether a PATCH may work on the store's own version of the original (FindQuery.shared) rather
 * than a copy of it: nothing here changes the original (the updated document is a new object,
 * src/drivers/memory keeps versions unchanged), and it is handed to no code of the
 * application's that could: no update hook, no update feature, no field rule, no custom rule.
 */
function onlyReadHere(services: Services, resource: Resource): boolean {
  return (
    !resource.field_rules &&
    !services.hooks.hasForResource("on_update", resource.name) &&
    !services.hooks.hasForResource("on_updated", resource.name) &&
    !services.features.has("beforeUpdate", resource) &&
    !services.features.has("afterUpdate", resource) &&
    !services.validators.get(resource.name)!.showsOriginal
  );
}

/** The HTTP method (src/methods/conditional.ts reads the request for the core). */
export const patchItem = itemWriteMethod(patchInternal);

/** What a caller that has loaded the original and checked If-Match already hands over (./patch-operators.ts). */
export interface LoadedOriginal {
  original: Doc;
  /** The ETag the write must still match; undefined for an unconditional write. */
  etag: string | undefined;
}

/**
 * A PATCH's or PUT's write of one document, conditional on `etag`: a duplicate unique value is
 * answered as the store reports it, a document no longer there or changed meanwhile with 404/412.
 */
export async function writeConditionally(services: Services, ctx: CallScope, where: Filter, etag: string | undefined, write: () => Promise<boolean>): Promise<void> {
  let written: boolean;
  try {
    written = await write();
  } catch (error) {
    if (error instanceof DuplicateKeyError) throw duplicateFailure(services.config, ctx, error);
    throw error;
  }
  if (!written) await conditionalWriteFailed(services.data, ctx, where, etag);
}

/**
 * Eve's patch_internal: the core that PATCH and server code (src/internal.ts) share, and that a
 * PATCH of plain fields on a resource with update operators ends in, `loaded` then given.
 */
export async function patchInternal(services: Services, ctx: CallScope, lookup: Filter, source: PayloadSource, precondition: Precondition, loaded?: LoadedOriginal): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const where = lookup;
  const original = loaded ? loaded.original : await loadOriginal(services.data, ctx, where, onlyReadHere(services, resource));
  const etag = loaded ? loaded.etag : requiredEtag(config, ctx, resource, original, precondition);
  const payload = requireDocument(await source());
  checkImmutableId(resource.id_field, payload, original);
  // The owner is the server's to set: a client cannot hand a document to another user.
  const authField = resource.auth_field;
  const owned = authField !== null && authField !== resource.id_field && authField in payload && ctx.requestAuthValue != null;
  // Changed below only when the owner is set: the caller's payload otherwise serves as it is.
  const changes = owned || resource.id_field in payload ? withoutKey(payload, resource.id_field) : payload;
  if (owned) changes[authField] = ctx.requestAuthValue;

  // Held from the lookups of `unique` to the write where no index guards it (unique-claims.ts);
  // a restore brings back the values the deleted document holds.
  const held = services.claims.hold(resource, original[config.DELETED] === true ? [changes, original] : [changes]);
  const release = held && (await held);
  let updates: Doc;
  let updated: Doc;
  try {
    const validated = validateWrite(services, ctx, keepPathValues(ctx, resource, config, changes), original, "PATCH");
    updates = validated instanceof Promise ? await validated : validated;
    if (resource.soft_delete && original[config.DELETED] === true) await checkRestoredUniques(services, ctx, original, changes);
    updates[config.LAST_UPDATED] = now();
    // A PATCH always leaves the document live: it restores a soft-deleted one.
    if (resource.soft_delete) updates[config.DELETED] = false;
    const beforeUpdate = services.features.run("beforeUpdate", ctx, resource, updates, original);
    if (beforeUpdate) await beforeUpdate;
    const onUpdate = services.hooks.emitForResource("on_update", resource.name, updates, original);
    if (onUpdate) await onUpdate;

    updated = resource.merge_nested_documents ? mergeNested(original, updates) : { ...original, ...updates };
    if (config.IF_MATCH) updates[config.ETAG] = updated[config.ETAG] = documentEtag(updated, resource.etag_ignore_fields);
    // Merged sub-documents go to the store as dotted paths: the values the request left alone are
    // not written back, so MongoDB keeps their BSON types (docs/decisions.md).
    const $set: Doc = {};
    for (const key of Object.keys(updates)) setMerged($set, key, updates[key], original[key], resource.merge_nested_documents, false);

    const conditional = writeCondition(config, resource, original, etag);
    await writeConditionally(services, ctx, where, etag, () => services.data.update(ctx, resource, conditional, { $set }));
  } finally {
    if (release) release();
  }

  const afterUpdate = services.features.run("afterUpdate", ctx, resource, updates, updated, original);

  if (afterUpdate) await afterUpdate;
  const onUpdated = services.hooks.emitForResource("on_updated", resource.name, updates, original);
  if (onUpdated) await onUpdated;

  const answering = writeResponse(services, ctx, resource, updated);
  const answer = answering instanceof Promise ? await answering : answering;
  // The ETag the caller is shown (src/read/visible.ts), which its next If-Match will carry.
  return { status: 200, body: answer, etag: config.IF_MATCH ? (answer[config.ETAG] as string) : undefined };
}
