// PATCH on an item of a resource with update operators (UPDATE_OPERATORS, docs/updates.md): a
// body of plain fields and `$` operators, both checked against the schema, applied by the store
// in one atomic step (never read, changed here and written back), with the rules that depend on
// the stored value kept by that same step. Plain-field PATCHes of such a resource take
// ./patch.ts's way unchanged; resources without operators never come here (src/app.ts).
import { DuplicateKeyError, UnmetRequirementError, type Filter } from "../drivers/types.ts";
import type { Reply } from "../render/reply.ts";
import { requireDocument, type PayloadSource } from "../request/payload.ts";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import { now } from "../util/clock.ts";
import { withoutKey } from "../util/objects.ts";
import { requirementOf } from "../validation/guards.ts";
import { writeResponse } from "./bandwidth.ts";
import { checkImmutableId, conditionalWriteFailed, itemWriteMethod, loadOriginal, requiredEtag, writeCondition, type Precondition } from "./conditional.ts";
import { duplicateFailure, patchInternal, validationFailure } from "./patch.ts";
import { validationEnv } from "./post.ts";
import { afterChange, checkBody, hookUpdates, splitBody, stampOf, storeUpdate, unmetFailure } from "./updates.ts";

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
  let etag = strict ? requiredEtag(config, resource, original, precondition) : undefined;
  const payload = requireDocument(await source());
  const { plain, operators } = splitBody(payload);
  if (!strict) etag = requiredEtag(config, resource, original, { ...precondition, enforce: precondition.enforce && (!operators || Object.keys(plain).length > 0) });
  if (!operators) return patchInternal(services, ctx, lookup, async () => payload, precondition, { original, etag });

  checkImmutableId(resource.id_field, plain, original);
  const given = withoutKey(plain, resource.id_field);
  // The owner is the server's to set: a client cannot hand a document to another user.
  const authField = resource.auth_field;
  if (authField && authField in given && ctx.requestAuthValue != null) given[authField] = ctx.requestAuthValue;
  const time = now();
  const env = validationEnv(services, ctx, original);
  const [validated, parsed] = await Promise.all([services.validators.get(resource.name)!.validate(given, "PATCH", env), (await services.operators(resource)).parse(operators, env, time)]);
  const { checked, issues } = checkBody(resource, given, validated, parsed);
  if (issues) throw validationFailure(config, issues);

  const updates = hookUpdates(config, resource, checked, time);
  const onUpdate = services.hooks.emitForResource("on_update", resource.name, updates, original);
  if (onUpdate) await onUpdate;
  const update = storeUpdate(resource, updates, original, time);
  const beforeModify = services.features.run("beforeModify", ctx, resource, update, [original]);
  if (beforeModify) await beforeModify;

  const guards = parsed.guards;
  let change;
  try {
    change = await services.data.modify(ctx, resource, writeCondition(config, resource, original, etag), update, { stamp: stampOf(config, resource), require: requirementOf(guards) });
  } catch (error) {
    if (error instanceof UnmetRequirementError) throw unmetFailure(config, guards, error);
    if (error instanceof DuplicateKeyError) throw duplicateFailure(config, error);
    throw error;
  }
  if (!change) return conditionalWriteFailed(services.data, ctx, lookup, etag);
  await afterChange(services, ctx, resource, update, updates, change);

  const answer = writeResponse(services, ctx, resource, change.after);
  return { status: 200, body: answer instanceof Promise ? await answer : answer, etag: config.IF_MATCH ? (change.after[config.ETAG] as string) : undefined };
}
