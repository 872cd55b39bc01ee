// Cerberus' validation walk over a (sub-)document: each field's rule queue run with Cerberus'
// queue semantics (a null value or an empty one skips some rules, a type error all the
// remaining ones). The JSON Schema engine runs the same walk in "residual" mode: only the rules
// its schema cannot express, below the nodes it covers.
import type { Doc } from "../drivers/types.ts";
import { bsonType } from "./datatypes.ts";
import { extendPath, Level, MESSAGES, type Path, type Segment } from "./errors.ts";
import type { RuleContext } from "./extensions.ts";
import type { DictNode, DictState, FieldNode, FieldRun } from "./tree.ts";
import { EMPTY_DROPS, NULL_DROPS, Q } from "./vocabulary.ts";
import { isPlainObject } from "../util/objects.ts";

export const pathKey = (path: Path) => path.join("\u0000");

export function fail(f: FieldRun, q: number, rule: string | null, message: string, sub = 0): void {
  f.level.add([1, f.index, q, sub], { path: f.path, rule, message });
}

/** Python's `==` on document values. */
export function pyEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  const ta = bsonType(a);
  if (ta || bsonType(b)) return ta === bsonType(b) && String(a) === String(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => pyEqual(v, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && pyEqual(a[k], b[k]));
  }
  return false;
}

export function distinct(values: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const v of values) if (!out.some((o) => pyEqual(o, v))) out.push(v);
  return out;
}

/** The value at `path` in a document, or null (Python's `.get()` giving None). */
export function valueAt(document: unknown, path: Path): unknown {
  let current = document;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return null;
    const next = (current as Record<Segment, unknown>)[segment];
    if (next === undefined || !Object.hasOwn(current, segment)) return null;
    current = next;
  }
  return current ?? null;
}

export function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** `len(value)` for Python's Sized values, undefined for the others. */
export function sizeOf(value: unknown): number | undefined {
  if (typeof value === "string") return codePoints(value);
  if (Array.isArray(value) || value instanceof Uint8Array) return value.length;
  if (value instanceof Set) return value.size;
  if (isPlainObject(value)) return Object.keys(value).length;
  return undefined;
}

/** The members a Python `set(value)` would hold, for non-string iterables. */
export function members(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (value instanceof Set) return [...value];
  if (isPlainObject(value)) return Object.keys(value);
  return undefined;
}

export function ruleContext(f: FieldRun, q: number, sub: number[] = []): RuleContext {
  let seq = 0;
  const parent = f.path.slice(0, -1);
  return {
    error: (field, message) => {
      const path = field === f.field ? f.path : [...parent, field];
      f.level.add([1, f.index, q, ...sub, seq++], { path, rule: null, message });
    },
    document: f.container,
    root: f.doc.root,
    original: f.doc.original,
    mode: f.doc.mode,
    resource: f.doc.resource,
    path: f.path,
    env: f.doc.env,
  };
}

/** Validates one field's value against its rules (Cerberus' `__validate_definitions`). */
export function validateField(f: FieldRun, value: unknown): void {
  const node = f.node;
  let skipNull = false;
  if (value === null) {
    if (!f.residual && !node.nullable) fail(f, Q.nullable, "nullable", MESSAGES.nullable);
    skipNull = true;
  }
  if (node.readonly) {
    if (f.doc.normalized) {
      if (f.path.length === 1 && f.doc.blocked?.has(String(f.field))) return;
    } else if (!pyEqual(value, valueAt(f.doc.original, f.path))) {
      fail(f, Q.readonly, "readonly", MESSAGES.readonly);
    }
  }
  if (node.typeTest && !skipNull) {
    if (f.residual) {
      if (f.doc.badType?.has(pathKey(f.path))) return;
    } else if (!node.typeTest(value)) {
      fail(f, Q.type, "type", MESSAGES.type(node.typeLabel));
      return;
    }
  }
  let skipEmpty = false;
  if (node.hasEmpty && !skipNull && sizeOf(value) === 0) {
    skipEmpty = true;
    if (!f.residual && !node.empty) fail(f, Q.empty, "empty", MESSAGES.empty);
  }
  for (const rule of node.queue) {
    if (f.residual && rule.json === "full") continue;
    if ((skipNull && NULL_DROPS.has(rule.name)) || (skipEmpty && EMPTY_DROPS.has(rule.name))) continue;
    const pending = rule.run(value, f, rule.q);
    if (pending) f.doc.pending.push(pending);
  }
}

/** A child FieldRun in a child validator. */
export function child(f: FieldRun, node: FieldNode, level: Level, field: Segment, container: Doc | unknown[], index: number, dict: DictState): FieldRun {
  return {
    doc: f.doc,
    node,
    level,
    path: extendPath(f.path, field),
    field,
    container,
    index,
    residual: f.residual && node.covered,
    update: f.update,
    dict,
  };
}

/** Validates a mapping against a sub-schema (a child validator's `validate`). */
export function validateDict(parent: Omit<FieldRun, "node" | "field" | "container" | "index" | "dict">, dict: DictNode, document: Doc): void {
  const state: DictState = { node: dict, unrequired: null };
  const keys = Object.keys(document);
  const { level, path, residual } = parent;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const node = dict.fields.get(key);
    if (node) {
      const f: FieldRun = { doc: parent.doc, node, level, path: extendPath(path, key), field: key, container: document, index: i, residual: residual && node.covered, update: parent.update, dict: state };
      if (!f.residual || node.residualWork) validateField(f, document[key]);
    } else if (!residual && !dict.allowUnknown && !dict.meta.has(key)) {
      level.add([1, i, 0], { path: extendPath(path, key), rule: null, message: MESSAGES.unknown });
    }
  }
  if (parent.update || (residual && dict.requiredInJson)) return;
  dict.required.forEach((field, i) => {
    if (!state.unrequired?.has(field) && !Object.hasOwn(document, field)) {
      level.add([2, i], { path: extendPath(path, field), rule: "required", message: MESSAGES.required });
    }
  });
  if (state.unrequired?.size) {
    const present = new Set(keys.filter((k) => document[k] !== null));
    const unrequired = [...state.unrequired];
    if (!unrequired.some((f) => present.has(f))) {
      unrequired.forEach((field, i) => {
        if (!present.has(field)) level.add([3, i], { path: extendPath(path, field), rule: "required", message: MESSAGES.required });
      });
    }
  }
}

export const noDict = (): DictState => ({ node: null, unrequired: null });
