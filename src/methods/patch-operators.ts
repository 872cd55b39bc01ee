// PATCH on an item of a resource with update operators (UPDATE_OPERATORS, docs/updates.md): a
// body of plain fields and `$` operators, both checked against the schema, applied by the store
// in one atomic step (never read, changed here and written back), with the rules that depend on
// the stored value kept by that same step. Plain-field PATCHes of such a resource take
// ./patch.ts's way unchanged; resources without operators never come here (src/app.ts).
import { DuplicateKeyError, UnmetRequirementError, type Change, type Doc, type Filter, type Update } from "../drivers/types.ts";
import type { Reply } from "../render/reply.ts";
import { requireDocument, type PayloadSource } from "../request/payload.ts";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import { now } from "../util/clock.ts";
import { isPlainObject, withoutKey } from "../util/objects.ts";
import { keepPathValues } from "../routing/lookup.ts";
import { requirementOf } from "../validation/guards.ts";
import { writeResponse } from "./bandwidth.ts";
import { checkImmutableId, conditionalWriteFailed, itemWriteMethod, loadOriginal, requiredEtag, writeCondition, type Precondition } from "./conditional.ts";
import { checkRestoredUniques, patchInternal, validateWrite, validationFailure } from "./patch.ts";
import { duplicateIssues, validationEnv } from "./post.ts";
import { fieldMask } from "../auth/field-masks.ts";
import { afterChange, checkBody, givenValues, hookUpdates, operatorPaths, sentDocument, splitBody, stampOf, storeUpdate, unmetFailure } from "./updates.ts";
import { checkWritablePaths } from "../auth/field-writes.ts";
import { checkComparedPaths } from "../auth/field-compares.ts";
import type { Issues } from "../validation/types.ts";

/** The HTTP method of such a resource's items. */
export const patchItemWithOperators = itemWriteMethod(operatorPatchInternal);

/**
 * The core, for HTTP and server code alike. If-Match is checked before the body is read, as
 * for any PATCH, unless UPDATE_OPERATORS_ENFORCE_IF_MATCH lets a body of operators alone go
 * without one: it is then checked once the body shows what it holds.
 */
export async function operatorPatchInternal(services: Services, ctx: CallScope, lookup: Filter, source: PayloadSource, precondition: Precondition): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const original = await loadOriginal(services.data, ctx, lookup);
  const strict = resource.update_operators_enforce_if_match;
  let etag = strict ? requiredEtag(config, ctx, resource, original, precondition) : undefined;
  const payload = requireDocument(await source());
  const { plain, operators } = splitBody(payload);
  if (!strict) etag = requiredEtag(config, ctx, resource, original, { ...precondition, enforce: precondition.enforce && (!operators || Object.keys(plain).length > 0) });
  if (!operators) return patchInternal(services, ctx, lookup, async () => payload, precondition, { original, etag });

  checkImmutableId(resource.id_field, plain, original);
  const given = keepPathValues(ctx, resource, config, withoutKey(plain, resource.id_field));
  // The owner is the server's to set: a client cannot hand a document to another user.
  const authField = resource.auth_field;
  if (authField && authField in given && ctx.requestAuthValue != null) given[authField] = ctx.requestAuthValue;
  // Field rules (docs/contracts.md §4): a path the caller may not write refuses the request first.
  if (resource.field_rules) {
    checkWritablePaths(fieldMask(ctx, resource, "write", original), operatorPaths(operators));
    checkComparedPaths(fieldMask(ctx, resource, "read", original), operators);
  }
  // Held from the lookups of `unique` to the write where no index guards it (unique-claims.ts).
  const held = services.claims.hold(resource, original[config.DELETED] === true ? [givenValues(given, operators), original] : [givenValues(given, operators)]);
  const release = held && (await held);
  let updates: Doc;
  let update: Update;
  let change: Change | null;
  try {
    const time = now();
    let plainIssues: Issues = {};
    const validating = validateWrite(services, ctx, given, original, "PATCH", (issues) => (plainIssues = issues));
    const parsing = (await services.operators(resource)).parse(operators, validationEnv(services, ctx, original), time);
    const [document, parsed] = await Promise.all([validating, parsing]);
    const { checked, issues } = checkBody(resource, given, { document, issues: plainIssues }, parsed);
    if (issues) throw validationFailure(config, issues);
    if (resource.soft_delete && original[config.DELETED] === true) await checkRestoredUniques(services, ctx, original, sentDocument(given, operators));

    updates = hookUpdates(config, resource, checked, time);
    const onUpdate = services.hooks.emitForResource("on_update", resource.name, updates, original);
    if (onUpdate) await onUpdate;
    update = storeUpdate(resource, updates, original, time);
    const beforeModify = services.features.run("beforeModify", ctx, resource, update, [original]);
    if (beforeModify) await beforeModify;

    const guards = parsed.guards;
    try {
      change = await services.data.modify(ctx, resource, writeCondition(config, resource, original, etag), update, { stamp: stampOf(config, resource), require: requirementOf(guards) });
    } catch (error) {
      if (error instanceof UnmetRequirementError) throw unmetFailure(config, guards, error);
      if (error instanceof DuplicateKeyError) throw validationFailure(config, byOperator(duplicateIssues(error, fieldMask(ctx, resource, "read")), operators));
      throw error;
    }
  } finally {
    if (release) release();
  }
  if (!change) return conditionalWriteFailed(services.data, ctx, lookup, etag);
  await afterChange(services, ctx, resource, update, updates, change);

  const answering = writeResponse(services, ctx, resource, change.after);
  const answer = answering instanceof Promise ? await answering : answering;
  // The ETag the caller is shown (src/read/visible.ts), which its next If-Match will carry.
  return { status: 200, body: answer, etag: config.IF_MATCH ? (answer[config.ETAG] as string) : undefined };
}

/** Issues of fields an operator changed, keyed by that operator then the field, as the operators' own refusals are (docs/updates.md). */
function byOperator(issues: Issues, operators: Doc): Issues {
  const keyed: Issues = {};
  for (const [field, issue] of Object.entries(issues)) {
    const operator = Object.keys(operators).find((name) => isPlainObject(operators[name]) && Object.hasOwn(operators[name] as Doc, field));
    if (operator) ((keyed[operator] ??= {}) as Issues)[field] = issue;
    else keyed[field] = issue;
  }
  return keyed;
}
