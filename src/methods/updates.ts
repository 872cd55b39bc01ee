// What an update the store applies itself is made of (docs/updates.md), for an item PATCH with
// update operators (./patch-operators.ts) and a PATCH by filter (./by-filter.ts) alike: the body
// split into plain fields and operators, both checked, the `updates` hooks see, the Update sent
// to the store, its ETag stamp, and the answers to what the store refuses.
import type { CallScope } from "../scope.ts";
import type { Services } from "../services.ts";
import type { Change, Doc, Stamp, Update, UnmetRequirementError } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import { mediaFields } from "../features/media.ts";
import { etagStamp } from "../render/etag.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { isPlainObject } from "../util/objects.ts";
import { setMerged } from "./merged-paths.ts";
import { brokenGuards, kindGuard, type Guard } from "../validation/guards.ts";
import { MESSAGES } from "../validation/errors.ts";
import type { ParsedOperators } from "../validation/operators.ts";
import type { Issues } from "../validation/types.ts";

/** A body's plain fields (merged as a PATCH merges them) and its update operators (null: none). */
export function splitBody(payload: Doc): { plain: Doc; operators: Doc | null } {
  const plain: Doc = {};
  let operators: Doc | null = null;
  for (const key of Object.keys(payload)) {
    if (key.startsWith("$")) (operators ??= {})[key] = payload[key];
    else plain[key] = payload[key];
  }
  return { plain, operators };
}

/** The values a body gives fields outright, its plain ones and its `$set`: what src/methods/unique-claims.ts holds. */
export function givenValues(plain: Doc, operators: Doc | null): Doc {
  const set = operators?.$set;
  return isPlainObject(set) ? { ...plain, ...set } : plain;
}

/** The paths a body's update operators name, as sent (what field rules check before anything else). */
export function operatorPaths(operators: Doc): string[] {
  return Object.values(operators).flatMap((fields) => (isPlainObject(fields) ? Object.keys(fields) : []));
}

/** The validated plain fields and the checked operators of a body, or the 422 naming what is wrong. */
export interface CheckedBody {
  plain: Doc;
  parsed: ParsedOperators | null;
}

/**
 * Checks both halves of a body. `validated` is the plain fields as the validator returned them
 * (defaults it added included); `given` the fields the client sent. A default that would change
 * a field an operator changes is left to the operator; a sent field that an operator changes
 * too is refused, as are media fields beside operators or in a write by filter.
 */
export function checkBody(resource: Resource, given: Doc, validated: { document: Doc; issues: Issues }, parsed: ParsedOperators | null, byFilter = false): { checked: CheckedBody; issues: Issues | null } {
  const issues: Issues = { ...validated.issues, ...(parsed?.issues ?? {}) };
  const plain: Doc = {};
  const paths = parsed?.paths ?? [];
  const touches = (field: string) => paths.some((path) => path === field || path.startsWith(`${field}.`));
  for (const [field, value] of Object.entries(validated.document)) {
    if (!touches(field)) plain[field] = value;
    else if (Object.hasOwn(given, field)) issues[field] = "conflicts with an update operator on the same field";
  }
  // Files are stored by an item write's features; an update the store applies has none to store them.
  if (parsed || byFilter) for (const field of mediaFields(resource)) if (Object.hasOwn(given, field)) issues[field] = "media fields are written by POST, PUT or an item PATCH without update operators";
  return { checked: { plain, parsed }, issues: Object.keys(issues).length > 0 ? issues : null };
}

/** What hooks see as a PATCH's updates: the plain fields, the operators, and the meta fields the write sets. */
export function hookUpdates(config: Config, resource: Resource, checked: CheckedBody, now: Date): Doc {
  const updates: Doc = { ...checked.plain, ...(checked.parsed?.operators ?? {}) };
  updates[config.LAST_UPDATED] = now;
  // A PATCH always leaves the document live: it restores a soft-deleted one.
  if (resource.soft_delete) updates[config.DELETED] = false;
  return updates;
}

/** What a request sends: its plain fields, and each path its operators change (dotted). */
export function sentDocument(plain: Doc, operators: Doc | null): Doc {
  if (!operators) return plain;
  const sent: Doc = { ...plain };
  for (const path of operatorPaths(operators)) sent[path] = true;
  return sent;
}

/**
 * The Update a PATCH's `updates` (as the hooks left them) makes. Plain sub-documents merge into
 * the stored ones (MERGE_NESTED_DOCUMENTS) as dotted paths, so the store merges them in its own
 * step: where the one document's original has no sub-document there, the value replaces it, as
 * Eve's merge does; a write by filter (no one original) always merges, and a guard of its own
 * refuses a document whose field is not a sub-document.
 */
export function storeUpdate(resource: Resource, updates: Doc, original: Doc | null, now: Date): Update {
  const update: Record<string, Doc> = {};
  const $set: Doc = (update.$set = {});
  for (const [key, value] of Object.entries(updates)) {
    if (!key.startsWith("$")) setMerged($set, key, value, original?.[key], resource.merge_nested_documents, original === null);
    else if (key === "$currentDate") for (const path of Object.keys(value as Doc)) $set[path] = now;
    else update[key] = { ...(update[key] ?? {}), ...(value as Doc) };
  }
  // The request's own fields and operators were checked apart (checkBody); a hook that sets a
  // field an operator changes makes an update no store can apply: the server's fault, named.
  for (const [operator, fields] of Object.entries(update)) {
    if (operator === "$set") continue;
    const clash = Object.keys(fields).find((path) => Object.keys($set).some((set) => set === path || set.startsWith(`${path}.`) || path.startsWith(`${set}.`)));
    if (clash !== undefined) throw new Error(`an on_update hook set '${clash}', which the request's ${operator} changes: one update cannot do both`);
  }
  return update as Update;
}

/** The ETag stamp of the resource's writes; none where ETags are off (IF_MATCH). */
export function stampOf(config: Config, resource: Resource): Stamp | undefined {
  return config.IF_MATCH ? etagStamp(config.ETAG, resource.etag_ignore_fields) : undefined;
}

/**
 * Guards for the sub-documents an update's dotted `$set` paths go into: where they are not
 * sub-documents (and not absent), the store must not create fields in them.
 */
export function mergeGuards(update: Update): Guard[] {
  const seen = new Set<string>();
  const guards: Guard[] = [];
  for (const path of Object.keys(update.$set ?? {})) {
    const segments = path.split(".");
    for (let i = 1; i < segments.length; i++) {
      const prefix = segments.slice(0, i).join(".");
      if (!seen.has(prefix)) guards.push(kindGuard("", prefix, "object", MESSAGES.type("dict")));
      seen.add(prefix);
    }
  }
  return guards;
}

/**
 * What document features see as the updates of a store-applied update: each top-level field it
 * changed, with its value in the document after (the oplog's `c`, versioning's copy).
 */
export function changedFields(update: Update, after: Doc): Doc {
  const fields: Doc = {};
  for (const paths of Object.values(update) as Doc[]) {
    for (const path of Object.keys(paths)) {
      const field = path.split(".")[0]!;
      if (Object.hasOwn(after, field)) fields[field] = after[field];
    }
  }
  return fields;
}

/**
 * The 422 of a document that does not meet the guards: which rule of which operator, for each.
 * (The store and the guards' own tests agree; were they not to, every guard is named.)
 */
export function unmetIssues(guards: Guard[], error: UnmetRequirementError): Issues[] {
  return error.documents.map((document) => brokenGuards(guards, document) ?? brokenGuards(guards, null)!);
}

/** Runs a document feature's afterUpdate and the on_updated hooks for one change. */
export async function afterChange(services: Services, ctx: CallScope, resource: Resource, update: Update, updates: Doc, change: Change): Promise<void> {
  const afterUpdate = services.features.run("afterUpdate", ctx, resource, changedFields(update, change.after), change.after, change.before);
  if (afterUpdate) await afterUpdate;
  const onUpdated = services.hooks.emitForResource("on_updated", resource.name, updates, change.before);
  if (onUpdated) await onUpdated;
}

/** The refusal of a write whose documents would break a rule only their stored values can show. */
export function unmetFailure(config: Config, guards: Guard[], error: UnmetRequirementError): HttpError {
  const [issues] = unmetIssues(guards, error);
  return new HttpError(config.VALIDATION_ERROR_STATUS, undefined, { body: { [config.ISSUES]: issues, [config.STATUS]: config.STATUS_ERR } });
}
