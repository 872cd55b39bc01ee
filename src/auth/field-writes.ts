// Writes under field rules (docs/contracts.md §4): a request that sets a field the caller may not
// write — or replaces a dict or a list whose stored value holds one, which would erase it — is
// refused as a whole with a 403 naming the field, before anything is validated or stored. A PUT
// (and a PATCH replacing a dict) keeps the stored value of such a field exactly as it was:
// present with its value, or absent. Every write path calls checkWritable with what it is about
// to set: POST, PUT, PATCH, form and multipart bodies (they become the same documents), and
// update operators and writes by filter with the paths they change.
import type { CallScope } from "../scope.ts";
import type { Doc } from "../drivers/types.ts";
import { HttpError } from "../errors.ts";
import type { Resource } from "../settings/normalize.ts";
import type { Issues } from "../validation/types.ts";
import { fieldMask, pathVisibility, type Mask } from "./field-masks.ts";
import { isPlainObject } from "../util/objects.ts";

export function unwritableField(field: string): HttpError {
  return new HttpError(403, `You don't have the permission to write the field '${field}'.`);
}

/**
 * The fields the caller may not write (null: none), after refusing a `payload` that sets one.
 * `stored`: the document the write changes (undefined for a POST, whose hooks are asked about
 * the new document itself).
 */
export function checkWritable(ctx: CallScope, resource: Resource, payload: Doc, stored?: Doc): Mask | null {
  const mask = resource.field_rules === null ? null : fieldMask(ctx, resource, "write", stored ?? payload);
  refuseUnwritable(mask, payload, stored);
  return mask;
}

/** The refusal of checkWritable, under a mask the caller has (`stored`: as there). */
export function refuseUnwritable(mask: Mask | null, payload: Doc, stored?: Doc): void {
  const field = mask && firstUnwritable(payload, mask, stored);
  if (field) throw unwritableField(field);
}

/**
 * The same for dotted paths an operator or a write by filter changes (`$inc: {"stock.count": 1}`),
 * under the caller's write mask: a path the caller may not write, or one above such a field
 * (its whole value would change), is refused.
 */
export function checkWritablePaths(mask: Mask | null, paths: Iterable<string>): void {
  if (!mask) return;
  for (const path of paths) if (pathVisibility(mask, path) !== "shown") throw unwritableField(path);
}

const join = (prefix: string, name: string) => (prefix ? `${prefix}.${name}` : name);

function firstUnwritable(sent: Doc, mask: Mask, stored: unknown, prefix = ""): string | null {
  for (const [name, node] of mask) {
    if (!Object.hasOwn(sent, name)) continue;
    const path = join(prefix, name);
    if (node.hidden) return path;
    const value = sent[name];
    const kept = isPlainObject(stored) ? stored[name] : undefined;
    let found: string | null = null;
    if (node.fields) found = isPlainObject(value) ? firstUnwritable(value, node.fields, kept, path) : firstHeld(kept, node, path);
    if (!found && node.items) {
      // List items have no identity to keep a stored item's value by: every sent item is
      // checked, and a stored list holding such a value cannot be replaced by this caller.
      for (const item of Array.isArray(value) ? value : []) found ??= isPlainObject(item) ? firstUnwritable(item, node.items, undefined, path) : null;
      found ??= firstHeld(kept, node, path);
    }
    if (found) return found;
  }
  return null;
}

/** The first withheld field a stored value holds: what replacing the value would erase. */
function firstHeld(stored: unknown, node: { fields: Mask | null; items: Mask | null }, prefix: string): string | null {
  if (node.items && Array.isArray(stored)) {
    for (const item of stored) {
      const found = firstHeld(item, { fields: node.items, items: null }, prefix);
      if (found) return found;
    }
    return null;
  }
  if (!node.fields || !isPlainObject(stored)) return null;
  for (const [name, inner] of node.fields) {
    if (!Object.hasOwn(stored, name)) continue;
    const found = inner.hidden ? join(prefix, name) : firstHeld(stored[name], inner, join(prefix, name));
    if (found) return found;
  }
  return null;
}

/** What a write keeps of the stored document: see keepUnwritable. */
export interface Kept {
  /** The payload with the kept values in place, so validation sees the document that will be stored. */
  document: Doc;
  /** Paths whose stored value (or absence) is put back after validation, their issues dropped. */
  restored: string[];
  /** PATCH: top-level fields the caller may not write and did not send, which validation may not add (a default). */
  absent: string[];
}

/**
 * The stored values of the fields the caller may not write that the write would drop: those
 * the payload leaves out (`whole`: a PUT, which replaces the document) and those inside the
 * dicts it sends (a PATCH replaces a dict unless MERGE_NESTED_DOCUMENTS). Applied to a copy.
 */
export function keepUnwritable(mask: Mask, payload: Doc, stored: Doc, whole: boolean): Kept {
  const kept: Kept = { document: payload, restored: [], absent: [] };
  kept.document = keepIn(payload, mask, stored, "", whole, kept);
  return kept;
}

function keepIn(target: Doc, mask: Mask, stored: Doc, prefix: string, fill: boolean, kept: Kept): Doc {
  let out = target;
  const set = (name: string, value: unknown) => ((out === target ? (out = { ...target }) : out)[name] = value);
  for (const [name, node] of mask) {
    const path = join(prefix, name);
    const sent = Object.hasOwn(target, name);
    const value = stored[name];
    if (node.hidden) {
      if (sent) continue;
      if (!fill) kept.absent.push(path);
      else {
        kept.restored.push(path);
        if (Object.hasOwn(stored, name)) set(name, value);
      }
    } else if (node.fields && isPlainObject(value) && (sent ? isPlainObject(target[name]) : fill)) {
      const inner = keepIn(sent ? (target[name] as Doc) : {}, node.fields, value, path, true, kept);
      if (inner !== target[name] && (sent || Object.keys(inner).length > 0)) set(name, inner);
    } else if (node.items && !sent && fill && firstHeld(value, node, path)) {
      kept.restored.push(path);
      set(name, value);
    }
  }
  return out;
}

/**
 * Puts kept values back after validation (which may have coerced them or added defaults): each
 * as `stored` holds it, or left out where `stored` has none (a write by filter passes {}: every
 * document keeps its own).
 */
export function restoreKept(document: Doc, stored: Doc, kept: Kept): void {
  for (const path of kept.absent) delete document[path];
  for (const path of kept.restored) {
    const parts = path.split(".");
    const last = parts.pop()!;
    let source: unknown = stored;
    for (const part of parts) source = isPlainObject(source) ? source[part] : undefined;
    const held = isPlainObject(source) && Object.hasOwn(source, last);
    let target: Doc | null = document;
    for (const part of parts) {
      const next: unknown = target[part];
      if (isPlainObject(next)) target = next;
      else if (held) target = target[part] = {};
      else {
        target = null;
        break;
      }
    }
    if (target === null) continue;
    if (held) target[last] = (source as Doc)[last];
    else delete target[last];
  }
}

/** Validation's issues without those of kept values: not the caller's to fix, and they could quote a value it may not read. */
export function withoutKeptIssues(issues: Issues, kept: Kept): Issues {
  for (const path of [...kept.restored, ...kept.absent]) dropIssue(issues, path.split("."));
  return issues;
}

function dropIssue(issues: unknown, parts: string[]): void {
  if (Array.isArray(issues)) return issues.forEach((member) => dropIssue(member, parts));
  if (!isPlainObject(issues)) return;
  const [first, ...rest] = parts as [string, ...string[]];
  if (!Object.hasOwn(issues, first)) return;
  if (rest.length > 0) dropIssue(issues[first], rest);
  const left = issues[first];
  const empty = rest.length === 0 || (isPlainObject(left) && Object.keys(left).length === 0) || (Array.isArray(left) && left.every((m) => isPlainObject(m) && Object.keys(m).length === 0));
  if (empty) delete issues[first];
}
