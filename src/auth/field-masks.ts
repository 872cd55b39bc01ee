// What a caller may read and write of a resource's documents: the field rules compiled with the
// settings (src/settings/field-rules.ts) resolved against the caller's roles (CallScope.roles)
// into a mask of the fields it may not read (or write). A resource without rules, and server
// code acting on its own (CallScope.unrestricted), get no mask (null) and pay nothing; a
// resource whose rules are role lists only resolves each set of roles once.
import type { CallScope } from "../scope.ts";
import type { Doc } from "../drivers/types.ts";
import type { Resource } from "../settings/normalize.ts";
import type { FieldRule, FieldRules, FieldRuleTree } from "../settings/field-rules.ts";
import { rolesAllow } from "./auth.ts";
import { isPlainObject } from "../util/objects.ts";

/** A field with something withheld: the whole of it, or some of its fields (a dict's or a list's dicts'). */
export interface MaskNode {
  readonly hidden: boolean;
  readonly fields: Mask | null;
  readonly items: Mask | null;
}

/** Withheld fields by name; never empty (no mask is null). */
export type Mask = ReadonlyMap<string, MaskNode>;

export type AccessMode = "read" | "write";

const HIDDEN: MaskNode = Object.freeze({ hidden: true, fields: null, items: null });

/** Role sets resolved per tree, for trees without hooks; bounded, for custom checks that give each user roles of their own. */
const resolved = new WeakMap<FieldRuleTree, Map<string, Mask | null>>();
const MAX_ROLE_SETS = 256;

/**
 * The fields the caller may not read (or write) in `document` — or, without a document, in
 * any document, which is what a query naming a field is checked against. Null: none.
 */
export function fieldMask(ctx: CallScope, resource: Resource, mode: AccessMode, document?: Doc): Mask | null {
  const tree = resource.field_rules;
  return tree === null || ctx.unrestricted ? null : treeMask(ctx, tree, mode, document);
}

function treeMask(ctx: CallScope, tree: FieldRuleTree, mode: AccessMode, document: Doc | undefined): Mask | null {
  if (tree.dynamic) return dynamicMask(ctx, tree, mode, document);
  let byRoles = resolved.get(tree);
  if (!byRoles) resolved.set(tree, (byRoles = new Map()));
  const key = `${mode}\u0000${rolesKey(ctx.roles)}`;
  let mask = byRoles.get(key);
  if (mask === undefined) {
    mask = resolve(ctx, tree, tree.fields, mode, undefined);
    if (byRoles.size < MAX_ROLE_SETS) byRoles.set(key, mask);
  }
  return mask;
}

function rolesKey(roles: readonly string[]): string {
  return roles.length < 2 ? (roles[0] ?? "") : [...roles].sort().join("\u0000");
}

/** Hooks decide per document; the oplog's changes follow the resource each entry names. */
function dynamicMask(ctx: CallScope, tree: FieldRuleTree, mode: AccessMode, document: Doc | undefined): Mask | null {
  const own = resolve(ctx, tree, tree.fields, mode, document);
  if (!tree.changes) return own;
  let changes: MaskNode | null = null;
  if (document) {
    const logged = typeof document.r === "string" ? tree.changes.get(document.r) : undefined;
    const fields = logged ? treeMask(ctx, logged, mode, undefined) : null;
    changes = fields && { hidden: false, fields, items: null };
  } else if ([...tree.changes.values()].some((logged) => treeMask(ctx, logged, mode, undefined) !== null)) {
    // A query cannot tell whose changes it reads: `c` is out of its reach for such a caller.
    changes = HIDDEN;
  }
  if (!changes) return own;
  return new Map([...(own ?? []), ["c", changes]]);
}

/** The mask of `rules` for the caller and `document`; `hooks: false` leaves field_access hooks out (src/methods/by-filter.ts). */
export function resolve(ctx: CallScope, tree: FieldRuleTree, rules: FieldRules, mode: AccessMode, document: Doc | undefined, hooks = true): Mask | null {
  let mask: Map<string, MaskNode> | null = null;
  for (const [name, rule] of rules) {
    const node = resolveRule(ctx, tree, rule, mode, document, hooks);
    if (node) (mask ??= new Map()).set(name, node);
  }
  return mask;
}

function resolveRule(ctx: CallScope, tree: FieldRuleTree, rule: FieldRule, mode: AccessMode, document: Doc | undefined, hooks: boolean): MaskNode | null {
  const roles = mode === "read" ? rule.read : rule.write;
  let allowed = roles === null || rolesAllow(roles, ctx.roles);
  if (rule.hook) {
    allowed = !hooks || rule.hook({ mode, method: ctx.method, resource: tree.resource, field: rule.path, user: ctx.user, roles: ctx.roles, document, allowed }) === true;
  }
  if (!allowed) return HIDDEN;
  const fields = rule.fields && resolve(ctx, tree, rule.fields, mode, document, hooks);
  const items = rule.items && resolve(ctx, tree, rule.items, mode, document, hooks);
  return fields || items ? { hidden: false, fields, items } : null;
}

/**
 * How much of a (dotted) path a mask withholds: all of it, some of what it holds (a dict or
 * list with withheld fields, which a comparison of the whole value would reveal), or nothing.
 * A number after a list is an index into it (`lines.0.cost`).
 */
export function pathVisibility(mask: Mask, path: string): "hidden" | "partly" | "shown" {
  let level: Mask | null = mask;
  let node: MaskNode | undefined;
  for (const part of path.split(".")) {
    if (node?.items && /^\d+$/.test(part)) continue;
    node = level?.get(part);
    if (!node) return "shown";
    if (node.hidden) return "hidden";
    level = node.fields ?? node.items;
  }
  return "partly";
}

/**
 * The document without what the mask withholds, at any depth; the document itself when that
 * is nothing. Copies only what it changes: a read may hand out the store's own values.
 */
export function withholdFields(document: Doc, mask: Mask): Doc {
  let out: Doc | null = null;
  for (const [name, node] of mask) {
    if (!Object.hasOwn(document, name)) continue;
    if (node.hidden) {
      out ??= { ...document };
      delete out[name];
      continue;
    }
    const value = document[name];
    const shown = withheldValue(value, node);
    if (shown !== value) (out ??= { ...document })[name] = shown;
  }
  return out ?? document;
}

function withheldValue(value: unknown, node: MaskNode): unknown {
  if (node.fields && isPlainObject(value)) return withholdFields(value, node.fields);
  if (node.items && Array.isArray(value)) {
    const items = node.items;
    let changed = false;
    const shown = value.map((item) => {
      const kept = isPlainObject(item) ? withholdFields(item, items) : item;
      if (kept !== item) changed = true;
      return kept;
    });
    return changed ? shown : value;
  }
  return value;
}
