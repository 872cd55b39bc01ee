// PATCH and DELETE on a collection URL, by filter (PATCH_BY_FILTER, DELETE_BY_FILTER;
// docs/updates.md): every document the request's `where` matches in the resource's scope
// (datasource filter, auth_field, soft delete) gets the same merge patch and update operators,
// or is deleted. A `where` is required unless the request asks for every document
// (`Prefer: all`); no more than max-affected documents (BY_FILTER_MAX_AFFECTED, and the
// request's `Prefer: max-affected=N`) may match; every resulting document is checked before
// anything is written, and the write is one all-or-nothing step where the store allows.
import type { RequestContext } from "../context.ts";
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import { combineFilters } from "../data/layer.ts";
import { DuplicateKeyError, UnmetRequirementError, type Change, type Doc, type Filter } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { parseWhere } from "../query/where.ts";
import type { Reply } from "../render/reply.ts";
import { readPayload, requireDocument } from "../request/payload.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { keepsUnique } from "../settings/rule-types.ts";
import { now } from "../util/clock.ts";
import { MESSAGES } from "../validation/errors.ts";
import { brokenGuards, requirementOf } from "../validation/guards.ts";
import type { Issues } from "../validation/types.ts";
import { writeResponse } from "./bandwidth.ts";
import { immutableIdError } from "./conditional.ts";
import { duplicateFailure, restoredDuplicates, validateWrite, validationFailure } from "./patch.ts";
import { fieldMask, resolve, type AccessMode, type Mask } from "../auth/field-masks.ts";
import { positiveWhole } from "../util/numbers.ts";
import { checkWritablePaths, refuseUnwritable } from "../auth/field-writes.ts";
import { checkComparedPaths } from "../auth/field-compares.ts";
import { validationEnv } from "./post.ts";
import { keepPathValues } from "../routing/lookup.ts";
import { afterChange, checkBody, givenValues, hookUpdates, mergeGuards, operatorPaths, sentDocument, splitBody, stampOf, storeUpdate, unmetIssues, type CheckedBody } from "./updates.ts";

/** What a request says in `Prefer` about a write by filter: every document, and at most how many. */
function preferences(request: Request): { all: boolean; maxAffected: number | null } {
  let all = false;
  let maxAffected: number | null = null;
  for (const preference of (request.headers.get("prefer") ?? "").split(",")) {
    const [token, value] = preference.split(";")[0]!.split("=").map((part) => part.trim().toLowerCase());
    if (token === "all" && value === undefined) all = true;
    else if (token === "max-affected") {
      maxAffected = value === undefined ? null : positiveWhole(value);
      if (maxAffected === null) throw new HttpError(400, "Prefer: max-affected must be a positive whole number");
    }
  }
  return { all, maxAffected };
}

/**
 * Whether a filter plainly matches every document: `{}`, or one made only of `$and`s of such
 * filters and `$or`s holding one, which would otherwise pass for a `where` and skip `Prefer: all`.
 */
function unrestricted(filter: unknown): boolean {
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) return false;
  for (const [key, value] of Object.entries(filter)) {
    if (key === "$and" && Array.isArray(value) && value.every(unrestricted)) continue;
    if (key === "$or" && Array.isArray(value) && value.some(unrestricted)) continue;
    return false;
  }
  return true;
}

/** The filter of the request and the most documents it may write (null: no limit). */
async function byFilter(services: Services, ctx: RequestContext, lookup: Filter): Promise<{ filter: Filter; limit: number | null }> {
  const config = services.config;
  const resource = ctx.resource!;
  const raw = ctx.arg(config.QUERY_WHERE);
  // A field the caller may not read is no filter of its either (docs/contracts.md §4).
  const where = raw ? await parseWhere(raw, resource, config, fieldMask(ctx, resource, "read")) : {};
  const prefers = preferences(ctx.request);
  if (unrestricted(where) && !prefers.all) {
    throw new HttpError(400, `A ${ctx.method} on the collection changes every document its '${config.QUERY_WHERE}' matches: send one, or 'Prefer: all' to ${ctx.method === "DELETE" ? "delete" : "change"} every document`);
  }
  const setting = resource.by_filter_max_affected;
  const limit = setting === null ? prefers.maxAffected : Math.min(setting, prefers.maxAffected ?? setting);
  return { filter: combineFilters(lookup, where), limit };
}

/** The documents a write by filter is about, refused whole when there are more than it may write. */
async function matching(services: Services, ctx: CallScope, filter: Filter, limit: number | null): Promise<Doc[]> {
  const { documents } = await services.data.find(ctx, ctx.resource!, { filter, count: false, ...(limit === null ? {} : { limit: limit + 1 }) });
  if (limit !== null && documents.length > limit) throw new HttpError(400, `The request matches more than ${limit} documents, the most it may change (max-affected)`);
  return documents;
}

/** The answer: how many documents matched and were changed, and each one (`item` makes its entry) when they fit in a page. */
async function summary<T>(services: Services, ctx: CallScope, matched: number, done: "updated" | "deleted", changed: T[], item: (each: T) => Doc | Promise<Doc>): Promise<Reply> {
  const config = services.config;
  const body: Doc = { [config.STATUS]: config.STATUS_OK, [config.META]: { matched, [done]: changed.length } };
  if (changed.length <= ctx.resource!.pagination_limit) body[config.ITEMS] = await Promise.all(changed.map(item));
  return { status: 200, body };
}

/** A 422 naming each document that would be invalid, with its issues, as a bulk POST's names each. */
function bulkFailure(config: Config, resource: Resource, failures: Array<{ document: Doc; issues: Issues }>, matched: number): HttpError {
  const status = config.VALIDATION_ERROR_STATUS;
  return new HttpError(status, undefined, {
    body: {
      [config.STATUS]: config.STATUS_ERR,
      [config.ERROR]: { code: status, message: `Update failure: ${failures.length} of ${matched} document(s) would contain error(s)` },
      [config.ITEMS]: failures.map(({ document, issues }) => ({ [resource.id_field]: document[resource.id_field], [config.STATUS]: config.STATUS_ERR, [config.ISSUES]: issues })),
    },
  });
}

/** The HTTP method: the request's filter, limit and body, handed to the core. */
export async function patchByFilter(services: Services, ctx: RequestContext, lookup: Filter): Promise<Reply> {
  const { filter, limit } = await byFilter(services, ctx, lookup);
  return patchManyInternal(services, ctx, filter, requireDocument(await readPayload(ctx, services.config)), limit);
}

/**
 * Every document matching `filter` patched with `payload`: its plain fields checked against
 * each document (as an item PATCH checks them, defaults aside: none is filled in), its
 * operators once, every rule the stored values decide against each document; one invalid
 * document refuses them all. Then one update for all, applied by the store; `on_update` and
 * `on_updated` fire for each document, with the one `updates` they share.
 */
export async function patchManyInternal(services: Services, ctx: CallScope, filter: Filter, payload: Doc, limit: number | null): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const split = resource.update_operators.length > 0 ? splitBody(payload) : { plain: payload, operators: null };
  const operators = split.operators;
  // The fields sent to every document, as they will be stored: `{"a.b": 1}` changes a's b.
  const plain = keepPathValues(ctx, resource, config, services.validators.get(resource.name)!.expanded(split.plain));
  if (resource.id_field in plain) throw immutableIdError(resource.id_field);
  if (resource.auth_field && resource.auth_field in plain && ctx.requestAuthValue != null) plain[resource.auth_field] = ctx.requestAuthValue;
  // Held from the lookups of `unique` to the write where no index guards it (unique-claims.ts).
  const held = services.claims.hold(resource, [givenValues(plain, operators)]);
  const release = held && (await held);
  try {
    return await patchMatching(services, ctx, filter, limit, plain, operators);
  } finally {
    if (release) release();
  }
}

async function patchMatching(services: Services, ctx: CallScope, filter: Filter, limit: number | null, plain: Doc, operators: Doc | null): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const originals = await matching(services, ctx, filter, limit);
  if (originals.length === 0) {
    await refuseInvalidBody(services, ctx, plain, operators);
    return summary(services, ctx, 0, "updated", [], () => ({}));
  }

  const time = now();
  const one = originals.length === 1 ? originals[0] : undefined;
  if (resource.field_rules) checkPaths(ctx, resource, plain, operators, originals);
  const parsed = operators ? await (await services.operators(resource)).parse(operators, validationEnv(services, ctx, one), time) : null;
  const results = await Promise.all(
    originals.map(async (original) => {
      let issues: Issues = {};
      // Each document keeps its own values of fields the caller may not write: none goes into the one update.
      const document = await validateWrite(services, ctx, plain, original, "PATCH", (found) => (issues = found), "none");
      return { document, issues };
    }),
  );
  const failures: Array<{ document: Doc; issues: Issues }> = [];
  let checked: CheckedBody | null = null;
  results.forEach((result, i) => {
    // Only what the client sent: defaults differ from document to document, and one update is sent for all.
    const sent: Doc = {};
    for (const field of Object.keys(plain)) if (Object.hasOwn(result.document, field)) sent[field] = result.document[field];
    const outcome = checkBody(resource, plain, { document: sent, issues: result.issues }, parsed, true);
    if (outcome.issues) failures.push({ document: originals[i]!, issues: outcome.issues });
    checked ??= outcome.checked;
  });
  // A document brought back from a soft delete keeps its unique values: one another has taken refuses them all.
  const sent = sentDocument(plain, operators);
  for (const original of originals) {
    const restoring = restoredDuplicates(services, ctx, original, sent);
    const issues = restoring && (await restoring);
    if (issues) failures.push({ document: original, issues });
  }
  if (failures.length === 0) failures.push(...duplicates(resource, config, checked!, originals));
  const updates = hookUpdates(config, resource, checked!, time);
  const guards = [...(parsed?.guards ?? []), ...mergeGuards(storeUpdate(resource, updates, null, time))];
  if (failures.length === 0) {
    for (const original of originals) {
      const broken = brokenGuards(guards, original);
      if (broken) failures.push({ document: original, issues: broken });
    }
  }
  if (failures.length > 0) throw bulkFailure(config, resource, failures, originals.length);

  for (const original of originals) {
    const onUpdate = services.hooks.emitForResource("on_update", resource.name, updates, original);
    if (onUpdate) await onUpdate;
  }
  const update = storeUpdate(resource, updates, null, time);
  const beforeModify = services.features.run("beforeModify", ctx, resource, update, originals);
  if (beforeModify) await beforeModify;
  let changes: Change[];
  try {
    const ids = originals.map((original) => original._id);
    changes = await services.data.modifyMany(ctx, resource, filter, update, { ids, stamp: stampOf(config, resource), require: requirementOf(guards) });
  } catch (error) {
    if (error instanceof UnmetRequirementError) {
      const issues = unmetIssues(guards, error);
      throw bulkFailure(config, resource, error.documents.map((document, i) => ({ document, issues: issues[i]! })), originals.length);
    }
    if (error instanceof DuplicateKeyError) throw duplicateFailure(config, ctx, error);
    throw error;
  }
  for (const change of changes) await afterChange(services, ctx, resource, update, updates, change);
  return summary(services, ctx, originals.length, "updated", changes, (change) => writeResponse(services, ctx, resource, change.after));
}

/**
 * A body that matched no document is still checked as far as no document is needed, so that a
 * client's mistake shows before the day a document matches: field rules that depend on none,
 * the operators, and the plain fields as against a document holding nothing (but for their
 * `dependencies`, which only a document can meet; and where field_access hooks judge each
 * document, not at all). One 422 for the whole body, as an item PATCH's.
 */
async function refuseInvalidBody(services: Services, ctx: CallScope, plain: Doc, operators: Doc | null): Promise<void> {
  const resource = ctx.resource!;
  if (resource.field_rules) checkPaths(ctx, resource, plain, operators, []);
  const parsed = operators ? await (await services.operators(resource)).parse(operators, validationEnv(services, ctx, undefined), now()) : null;
  let issues: Issues = {};
  // field_access hooks judge a document: with none, the plain fields wait for one.
  const document = resource.field_rules?.dynamic ? {} : await validateWrite(services, ctx, plain, {}, "PATCH", (found) => (issues = found), "none");
  for (const field of Object.keys(issues)) if (resource.schema[field]?.dependencies !== undefined) delete issues[field];
  const outcome = checkBody(resource, plain, { document, issues }, parsed, true);
  if (outcome.issues) throw validationFailure(services.config, outcome.issues);
}

/**
 * Field rules (docs/contracts.md §4): the paths the operators change, and the fields a plain
 * sub-document replaces whole where nested documents are not merged, refuse the request when
 * the caller may not write them; per document where field_access hooks decide, and by the role
 * lists alone where no document matched. The plain fields themselves are checked with each
 * document's validation (validateWrite).
 */
function checkPaths(ctx: CallScope, resource: Resource, plain: Doc, operators: Doc | null, originals: Doc[]): void {
  const paths = [...(operators ? operatorPaths(operators) : []), ...(resource.merge_nested_documents ? [] : Object.keys(plain))];
  if (originals.length === 0) {
    const write = roleMask(ctx, resource, "write");
    checkWritablePaths(write, paths);
    // The plain fields' rules come with their validation, which field_access hooks put off: not the role lists'.
    if (resource.field_rules!.dynamic) refuseUnwritable(write, plain);
    if (operators) checkComparedPaths(roleMask(ctx, resource, "read"), operators);
    return;
  }
  for (const original of resource.field_rules!.dynamic ? originals : [undefined]) {
    checkWritablePaths(fieldMask(ctx, resource, "write", original), paths);
    if (operators) checkComparedPaths(fieldMask(ctx, resource, "read", original), operators);
  }
}

/**
 * The fields role lists withhold from every document: a rule with a field_access hook, which may
 * allow more for a document, withholds nothing here. What a write that matched no document is
 * checked against, there being none to ask the hooks of.
 */
function roleMask(ctx: CallScope, resource: Resource, mode: AccessMode): Mask | null {
  const tree = resource.field_rules;
  return tree === null || ctx.unrestricted ? null : resolve(ctx, tree, tree.fields, mode, undefined, false);
}

/**
 * A value the patch gives a `unique` field is the same in every document it changes: with more
 * than one, all but the first would repeat it (as two documents of a bulk POST would).
 */
function duplicates(resource: Resource, config: Config, checked: CheckedBody, originals: Doc[]): Array<{ document: Doc; issues: Issues }> {
  if (originals.length < 2) return [];
  const repeated = (set: Doc): Issues => {
    const issues: Issues = {};
    for (const [field, value] of Object.entries(set)) if (keepsUnique(resource.schema[field])) issues[field] = MESSAGES.notUnique(value);
    return issues;
  };
  const issues = repeated(checked.plain);
  // An operator's value is keyed by operator then path, as its other refusals are (docs/updates.md).
  const operated = repeated((checked.parsed?.update.$set as Doc | undefined) ?? {});
  if (Object.keys(operated).length > 0) issues.$set = operated;
  return Object.keys(issues).length > 0 ? originals.slice(1).map((document) => ({ document, issues })) : [];
}

/** The HTTP method of a DELETE by filter. */
export async function deleteByFilter(services: Services, ctx: RequestContext, lookup: Filter): Promise<Reply> {
  const { filter, limit } = await byFilter(services, ctx, lookup);
  return deleteManyInternal(services, ctx, filter, limit);
}

/**
 * Every (live) document matching `filter` deleted, or marked deleted where the resource
 * soft-deletes. The hooks are those of Eve's DELETE on a collection, with the documents
 * matched: `on_delete_resource`, `on_delete_resource_originals`, `on_deleted_resource`.
 */
export async function deleteManyInternal(services: Services, ctx: CallScope, filter: Filter, limit: number | null): Promise<Reply> {
  const resource = ctx.resource!;
  const config = services.config;
  const onDeleteResource = services.hooks.emitForResource("on_delete_resource", resource.name);
  if (onDeleteResource) await onDeleteResource;
  // A `where` on the deleted flag may match documents already deleted: deleting them again changes nothing, as an item DELETE of one is a 404.
  if (resource.soft_delete) filter = combineFilters(filter, { [config.DELETED]: { $ne: true } });
  const originals = await matching(services, ctx, filter, limit);
  if (originals.length === 0) return summary(services, ctx, 0, "deleted", [], () => ({}));
  const onOriginals = services.hooks.emitForResource("on_delete_resource_originals", resource.name, originals, filter);
  if (onOriginals) await onOriginals;
  const ids = originals.map((original) => original._id);
  let gone: Doc[];
  if (resource.soft_delete) {
    const update = { $set: { [config.DELETED]: true, [config.LAST_UPDATED]: now() } };
    const beforeModify = services.features.run("beforeModify", ctx, resource, update, originals);
    if (beforeModify) await beforeModify;
    const changes = await services.data.modifyMany(ctx, resource, filter, update, { ids, stamp: stampOf(config, resource) });
    for (const { before, after } of changes) {
      const afterSoftDelete = services.features.run("afterSoftDelete", ctx, resource, after, before);
      if (afterSoftDelete) await afterSoftDelete;
    }
    gone = changes.map((change) => change.before);
  } else {
    const removed = await services.data.removeMany(ctx, resource, filter, { ids });
    // A document another writer changed out of the filter meanwhile is still there: its files stay too.
    const kept = removed === originals.length ? [] : (await services.data.find(ctx, resource, { filter: { _id: { $in: ids } }, showDeleted: true, count: false })).documents;
    const left = new Set(kept.map((document) => String(document._id)));
    gone = originals.filter((original) => !left.has(String(original._id)));
    const afterDeleteMany = services.features.run("afterDeleteMany", ctx, resource, gone);
    if (afterDeleteMany) await afterDeleteMany;
  }
  const onDeletedResource = services.hooks.emitForResource("on_deleted_resource", resource.name);
  if (onDeletedResource) await onDeletedResource;
  return summary(services, ctx, originals.length, "deleted", gone, (document) => ({ [resource.id_field]: document[resource.id_field] }));
}
