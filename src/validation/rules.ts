// Cerberus' validation phase as closures: the walk over a (sub-)document and each rule's check,
// with Cerberus' queue semantics (a null value or an empty one skips some rules, a type error
// all the remaining ones). The JSON Schema engine runs the same walk in "residual" mode: only
// the rules its schema cannot express, below the nodes it covers.
import type { Doc } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import type { DictNode, FieldNode } from "./compile.ts";
import { ObjectId } from "bson";
import { bsonType, HEX24, isPlainObject } from "./datatypes.ts";
import { Level, MESSAGES, type Path, type Segment } from "./errors.ts";
import type { CustomRule, FieldValidator, RuleContext } from "./extensions.ts";
import type { ValidationEnv, ValidationMode } from "./types.ts";
import { EMPTY_DROPS, NULL_DROPS, Q, type LogicRule } from "./vocabulary.ts";

/** One document's validation. */
export interface DocRun {
  mode: ValidationMode;
  env: ValidationEnv;
  config: Config;
  resource: Resource;
  root: Doc;
  original: Doc | undefined;
  /** Whether the normalization phase ran (PATCH skips it unless normalize_on_patch). */
  normalized: boolean;
  pending: Array<Promise<unknown>>;
  /** JSON Schema engine: where its schema found a type error (closures skip those fields). */
  badType: Set<string> | null;
  /** Top-level fields that failed `readonly` during normalization: nothing else is checked. */
  blocked: Set<string>;
  /** Values checked for uniqueness, for the cross-document check of a bulk insert. */
  unique: UniqueCandidate[];
}

export interface UniqueCandidate {
  field: string;
  value: unknown;
  level: Level;
  key: number[];
  path: Path;
  /** Set once the database lookup reported it. */
  reported: boolean;
}

/** The state of one child validator over a mapping. */
export interface DictState {
  node: DictNode | null;
  /** Cerberus' `_unrequired_by_excludes`. */
  unrequired: Set<string>;
}

/** One field being validated. */
export interface FieldRun {
  doc: DocRun;
  node: FieldNode;
  level: Level;
  path: Path;
  field: Segment;
  /** The validator's document: the mapping that holds the field, or the list for items. */
  container: Doc | unknown[];
  /** The field's position in its container: the order Cerberus validates fields in. */
  index: number;
  residual: boolean;
  update: boolean;
  dict: DictState;
}

export type RuleRun = (value: unknown, f: FieldRun, q: number) => void | Promise<unknown>;

export const pathKey = (path: Path) => path.join("\u0000");

function fail(f: FieldRun, q: number, rule: string | null, message: string, sub = 0): void {
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

function distinct(values: unknown[]): unknown[] {
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

function codePoints(text: string): number {
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
function sizeOf(value: unknown): number | undefined {
  if (typeof value === "string") return codePoints(value);
  if (Array.isArray(value) || value instanceof Uint8Array) return value.length;
  if (value instanceof Set) return value.size;
  if (isPlainObject(value)) return Object.keys(value).length;
  return undefined;
}

/** The members a Python `set(value)` would hold, for non-string iterables. */
function members(value: unknown): unknown[] | undefined {
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
      if (f.path.length === 1 && f.doc.blocked.has(String(f.field))) return;
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
function child(f: FieldRun, node: FieldNode, level: Level, field: Segment, container: Doc | unknown[], index: number, dict: DictState): FieldRun {
  return {
    doc: f.doc,
    node,
    level,
    path: [...f.path, field],
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
  const state: DictState = { node: dict, unrequired: new Set() };
  const keys = Object.keys(document);
  const { level, path, residual } = parent;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const node = dict.fields.get(key);
    if (node) {
      const f: FieldRun = { doc: parent.doc, node, level, path: [...path, key], field: key, container: document, index: i, residual: residual && node.covered, update: parent.update, dict: state };
      if (!f.residual || node.residualWork) validateField(f, document[key]);
    } else if (!residual && !dict.allowUnknown && !dict.meta.has(key)) {
      level.add([1, i, 0], { path: [...path, key], rule: null, message: MESSAGES.unknown });
    }
  }
  if (parent.update || (residual && dict.requiredInJson)) return;
  dict.required.forEach((field, i) => {
    if (!state.unrequired.has(field) && !Object.hasOwn(document, field)) {
      level.add([2, i], { path: [...path, field], rule: "required", message: MESSAGES.required });
    }
  });
  if (state.unrequired.size) {
    const present = new Set(keys.filter((k) => document[k] !== null));
    const unrequired = [...state.unrequired];
    if (!unrequired.some((f) => present.has(f))) {
      unrequired.forEach((field, i) => {
        if (!present.has(field)) level.add([3, i], { path: [...path, field], rule: "required", message: MESSAGES.required });
      });
    }
  }
}

const noDict = (): DictState => ({ node: null, unrequired: new Set() });

// ---- rules --------------------------------------------------------------------------------

export function allowed(values: unknown[]): RuleRun {
  return (value, f, q) => {
    const items = members(value);
    if (items) {
      const bad = distinct(items.filter((v) => !values.some((a) => pyEqual(a, v))));
      if (bad.length) fail(f, q, "allowed", MESSAGES.unallowedValues(bad));
    } else if (!values.some((a) => pyEqual(a, value))) {
      fail(f, q, "allowed", MESSAGES.unallowedValue(value));
    }
  };
}

export function forbidden(values: unknown[]): RuleRun {
  return (value, f, q) => {
    if (Array.isArray(value)) {
      const bad = distinct(value.filter((v) => values.some((a) => pyEqual(a, v))));
      if (bad.length) fail(f, q, "forbidden", MESSAGES.unallowedValues(bad));
    } else if (values.some((a) => pyEqual(a, value))) {
      fail(f, q, "forbidden", MESSAGES.unallowedValue(value));
    }
  };
}

export function contains(expected: unknown): RuleRun {
  const wanted = Array.isArray(expected) ? expected : [expected];
  return (value, f, q) => {
    const have = typeof value === "string" ? [...value] : members(value);
    if (!have) return;
    const missing = distinct(wanted.filter((w) => !have.some((h) => pyEqual(h, w))));
    if (missing.length) fail(f, q, "contains", MESSAGES.missingMembers(missing));
  };
}

function comparable(a: unknown, b: unknown): [number | string, number | string] | null {
  if (typeof a === "number" && typeof b === "number") return [a, b];
  if (typeof a === "string" && typeof b === "string") return [a, b];
  if (a instanceof Date && b instanceof Date) return [a.getTime(), b.getTime()];
  return null;
}

/** `min` / `max`; values Python cannot order against the bound are not checked. */
export function bound(name: "min" | "max", limit: unknown): RuleRun {
  return (value, f, q) => {
    const pair = comparable(value, limit);
    if (!pair) return;
    if (name === "min" ? pair[0] < pair[1] : pair[0] > pair[1]) fail(f, q, name, MESSAGES[name](limit));
  };
}

export function length(name: "minlength" | "maxlength", limit: number): RuleRun {
  return (value, f, q) => {
    const size = sizeOf(value);
    if (size === undefined) return;
    if (name === "minlength" ? size < limit : size > limit) fail(f, q, name, MESSAGES[name](limit));
  };
}

/**
 * A Cerberus regex as JavaScript: anchored the way Cerberus anchors it (`$` appended unless
 * present, matched from the start), Python-only syntax translated. `unicode` tells whether
 * it also compiles with the `u` flag, which JSON Schema validators use.
 */
export function compilePattern(pattern: string): { regex: RegExp; source: string; unicode: boolean } {
  const translated = (pattern.endsWith("$") ? pattern : pattern + "$")
    .replace(/\(\?P</g, "(?<")
    .replace(/\(\?P=(\w+)\)/g, "\\k<$1>")
    .replace(/\\A/g, "^")
    .replace(/\\Z/g, "$");
  const source = `^(?:${translated})`;
  try {
    return { regex: new RegExp(source, "u"), source, unicode: true };
  } catch {
    return { regex: new RegExp(source), source, unicode: false };
  }
}

export function regex(pattern: string, compiled: RegExp): RuleRun {
  return (value, f, q) => {
    if (typeof value === "string" && !compiled.test(value)) fail(f, q, "regex", MESSAGES.regex(pattern));
  };
}

/** Cerberus' `_lookup_field`: dotted paths, `^` for the root document. */
function lookupField(f: FieldRun, name: string): { found: boolean; value: unknown } {
  let path = name;
  let context: unknown = f.container;
  let atRoot = f.path.length === 1;
  if (path.startsWith("^")) {
    path = path.slice(1);
    if (!path.startsWith("^")) {
      context = f.doc.root;
      atRoot = true;
    }
  }
  const parts = path.split(".");
  const walk = (start: unknown) => {
    let current = start;
    for (const part of parts) {
      if (!isPlainObject(current) || !Object.hasOwn(current, part)) return { found: false, value: null };
      current = current[part];
    }
    return { found: true, value: current };
  };
  const result = walk(context);
  // Eve checks a PATCH (or PUT) against the stored values of fields it does not send.
  if (!result.found && atRoot && f.doc.original) return walk(f.doc.original);
  return result;
}

export function dependencies(spec: unknown): RuleRun {
  return (_value, f, q) => {
    if (isPlainObject(spec)) {
      const ok = Object.entries(spec).every(([name, wanted]) => {
        const allowedValues = Array.isArray(wanted) ? wanted : [wanted];
        const { value } = lookupField(f, name);
        return allowedValues.some((a) => pyEqual(a, value));
      });
      if (!ok) fail(f, q, "dependencies", MESSAGES.dependencyValues(spec));
      return;
    }
    const names = Array.isArray(spec) ? spec : [spec];
    names.forEach((name, i) => {
      if (!lookupField(f, String(name)).found) fail(f, q, "dependencies", MESSAGES.dependencyField(String(name)), i);
    });
  };
}

export function excludes(excluded: string[]): RuleRun {
  return (_value, f, q) => {
    if (f.node.required) {
      f.dict.unrequired.add(String(f.field));
      for (const name of excluded) if (f.dict.node?.fields.has(name)) f.dict.unrequired.add(name);
    }
    const container = f.container as Record<string, unknown>;
    if (excluded.some((name) => Object.hasOwn(container, name))) fail(f, q, "excludes", MESSAGES.excludes(excluded, f.field));
  };
}

/** `schema`: a sub-document against its mapping, or every list item against its rules. */
export function schema(node: FieldNode): RuleRun {
  return (value, f, q) => {
    if (node.dict && isPlainObject(value)) {
      if (f.residual && !node.dict.residualWork) return;
      const level = f.level.group(f.path, "schema", [1, f.index, q]);
      validateDict({ doc: f.doc, level, path: f.path, residual: f.residual, update: f.update }, node.dict, value);
    } else if (node.list && Array.isArray(value)) {
      const item = node.list;
      if (f.residual && item.covered && !item.residualWork) return;
      const level = f.level.group(f.path, "schema", [1, f.index, q]);
      value.forEach((v, i) => validateField(child(f, item, level, i, value, i, noDict()), v));
    }
  };
}

export function items(nodes: FieldNode[]): RuleRun {
  return (value, f, q) => {
    if (!Array.isArray(value)) return;
    if (value.length !== nodes.length) {
      if (!f.residual) fail(f, q, "items", MESSAGES.itemsLength(nodes.length, value.length));
      return;
    }
    const level = f.level.group(f.path, "items", [1, f.index, q]);
    nodes.forEach((node, i) => {
      const g = child(f, node, level, i, value, i, noDict());
      if (!g.residual || node.residualWork) validateField(g, value[i]);
    });
  };
}

function mappingRule(rule: "keysrules" | "valuesrules", node: FieldNode): RuleRun {
  return (value, f, q) => {
    if (!isPlainObject(value)) return;
    if (f.residual && node.covered && !node.residualWork) return;
    const level = f.level.group(f.path, rule, [1, f.index, q]);
    Object.keys(value).forEach((key, i) => validateField(child(f, node, level, key, value, i, noDict()), rule === "keysrules" ? key : value[key]));
  };
}

export const keysrules = (node: FieldNode) => mappingRule("keysrules", node);
export const valuesrules = (node: FieldNode) => mappingRule("valuesrules", node);

const LOGIC_PASSES: Record<LogicRule, (valid: number, total: number) => boolean> = {
  anyof: (valid) => valid >= 1,
  allof: (valid, total) => valid === total,
  noneof: (valid) => valid === 0,
  oneof: (valid) => valid === 1,
};

export function logic(rule: LogicRule, definitions: FieldNode[]): RuleRun {
  return (value, f, q) => {
    const doc: DocRun = { ...f.doc, pending: [] };
    const levels = definitions.map((node) => {
      const level = new Level();
      validateField({ ...f, doc, node, level, residual: false, dict: noDict() }, value);
      return level;
    });
    const finish = () => {
      const valid = levels.filter((l) => l.isEmpty()).length;
      if (!LOGIC_PASSES[rule](valid, definitions.length)) {
        f.level.add([1, f.index, q], { path: f.path, rule, message: MESSAGES[rule], definitions: levels });
      }
    };
    if (!doc.pending.length) return finish();
    return settle(doc.pending).then(finish);
  };
}

/** Waits for every pending check, including the ones those add. */
export async function settle(pending: Array<Promise<unknown>>): Promise<void> {
  while (pending.length) await Promise.all(pending.splice(0));
}

export function checkWith(validators: FieldValidator[]): RuleRun {
  return (value, f, q) => {
    const waiting: Array<Promise<unknown> | void> = validators.map((validate, i) => {
      const ctx = ruleContext(f, q, [i]);
      return validate(f.field, value, ctx.error, ctx);
    });
    const promises = waiting.filter((p): p is Promise<unknown> => !!p);
    return promises.length ? Promise.all(promises) : undefined;
  };
}

export function custom(validate: CustomRule, ruleValue: unknown): RuleRun {
  return (value, f, q) => validate(ruleValue, f.field, value, ruleContext(f, q));
}

/**
 * `unique`, `unique_to_user` and `unique_within_resource` (Eve's `_is_value_unique`): another
 * live document of the resource holding the value. `unique` and `unique_to_user` look at the
 * whole collection, `unique_within_resource` only at the resource's datasource filter.
 */
export function unique(kind: "unique" | "unique_to_user" | "unique_within_resource"): RuleRun {
  return (value, f, q) => {
    if (value === null) return;
    const { env, resource, config, original } = f.doc;
    const filter: Doc = { [f.node.queryPath]: value };
    if (original && original[config.ID_FIELD] !== undefined) filter[config.ID_FIELD] = { $ne: original[config.ID_FIELD] };
    if (kind === "unique_to_user" && resource.auth_field) filter[resource.auth_field] = env.requestAuthValue ?? null;
    const candidate: UniqueCandidate = { field: f.node.queryPath, value, level: f.level, key: [1, f.index, q], path: f.path, reported: false };
    f.doc.unique.push(candidate);
    return env.findOne(resource.name, filter, kind === "unique_within_resource" ? undefined : { ignoreFilter: true }).then((found) => {
      if (!found) return;
      candidate.reported = true;
      f.level.add(candidate.key, { path: f.path, rule: null, message: MESSAGES.notUnique(value) });
    });
  };
}

export interface RelationSpec {
  resource: string;
  field?: string;
  version?: boolean;
}

/** Eve's `_validate_data_relation`: the referenced document exists and is not soft-deleted. */
export function dataRelation(spec: RelationSpec, config: Config): RuleRun {
  const field = spec.field ?? config.ID_FIELD;
  const target = spec.resource;
  return (value, f, q) => {
    if (value === null || (f.node.nullable && isFalsy(value))) return;
    const { env } = f.doc;
    if (spec.version === true) {
      const versionField = config.VERSION;
      if (!isPlainObject(value) || !Object.hasOwn(value, field) || !Object.hasOwn(value, versionField)) {
        fail(f, q, null, MESSAGES.versionedRelationShape(field, versionField));
        return;
      }
      if (!config.DOMAIN[target]?.versioning) {
        fail(f, q, null, MESSAGES.unversionedRelation(target));
        return;
      }
      const shadowField = field === config.ID_FIELD ? field + config.VERSION_ID_SUFFIX : field;
      return env.findOne(target + config.VERSIONS, { [shadowField]: value[field], [versionField]: value[versionField] }).then((found) => {
        if (!found) fail(f, q, null, MESSAGES.versionedRelation(value[field], target, field, value[versionField]));
      });
    }
    const references = Array.isArray(value) ? value : [value];
    return Promise.all(
      references.map((reference, i) => {
        const id = bsonType(reference) === "DBRef" ? (reference as { oid: unknown }).oid : reference;
        return env.findOne(target, { [field]: storedReference(id, config.DOMAIN[target], field, config) }).then((found) => {
          if (!found) fail(f, q, null, MESSAGES.relation(id, target, field), i);
        });
      }),
    );
  };
}

/**
 * A reference sent as a string (a list data_relation without an item schema) looked up as Eve's
 * find_one looks it up: 24 hex digits are an ObjectId, unless the target field is typed otherwise.
 */
function storedReference(id: unknown, target: Resource | undefined, field: string, config: Config): unknown {
  if (typeof id !== "string" || !HEX24.test(id) || !target || target.query_objectid_as_string) return id;
  const type = target.schema[field]?.type ?? (field === config.ID_FIELD ? "objectid" : undefined);
  return type === undefined || type === "objectid" ? new ObjectId(id) : id;
}

/** Python's `not value`. */
function isFalsy(value: unknown): boolean {
  return value === false || value === 0 || value === "" || sizeOf(value) === 0;
}
