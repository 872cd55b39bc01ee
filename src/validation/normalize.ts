// What happens to a document before its rules are checked, in Eve's order: keys refused or
// expanded (dotted fields), values converted to their schema type (Eve's serializers), then
// Cerberus' normalization (renames, readonly check, defaults, default setters, coercion).
import type { Doc } from "../drivers/types.ts";
import type { DictNode, FieldNode } from "./tree.ts";
import { extendPath, Level, MESSAGES, type Path, type Segment } from "./errors.ts";
import { pyEqual, valueAt } from "./walk.ts";
import type { ValidationMode } from "./types.ts";
import { isPlainObject } from "../util/objects.ts";
import { asDbRef } from "./datatypes.ts";

const RESERVED_KEYS = new Set(["__proto__", "constructor", "prototype"]);

const refused = (key: string) => key.charCodeAt(0) === 36 /* $ */ || RESERVED_KEYS.has(key);

export interface KeyIssue {
  path: Path;
  message: string;
}

/**
 * A fresh copy of the incoming document: DBRefs (`{"$ref": …, "$id": …}`) made BSON DBRefs,
 * other keys that could reach a prototype or act as a database operator dropped (and reported), dotted keys are expanded into sub-documents
 * (Eve's normalize_dotted_fields).
 */
export function prepare(value: unknown, path: Path, expandDots: boolean, issues: KeyIssue[]): unknown {
  if (Array.isArray(value)) return value.map((v, i) => (v !== null && typeof v === "object" ? prepare(v, extendPath(path, i), expandDots, issues) : v));
  if (!isPlainObject(value)) return value;
  const dbref = asDbRef(value);
  if (dbref) return dbref;
  const out: Doc = {};
  let dotted: string[] | null = null;
  for (const key of Object.keys(value)) {
    const hasDot = key.includes(".");
    const bad = hasDot ? key.split(".").find(refused) : refused(key) ? key : undefined;
    if (bad !== undefined) {
      issues.push({ path: extendPath(path, key), message: bad.startsWith("$") ? MESSAGES.operatorKey : MESSAGES.reservedKey(bad) });
    } else if (expandDots && hasDot) {
      (dotted ??= []).push(key);
    } else {
      const v = value[key];
      out[key] = v !== null && typeof v === "object" ? prepare(v, extendPath(path, key), expandDots, issues) : v;
    }
  }
  for (const key of dotted ?? []) {
    const segments = key.split(".");
    let target = out;
    let conflict: string | null = null;
    for (let i = 0; i < segments.length - 1 && conflict === null; i++) {
      const segment = segments[i]!;
      if (!Object.hasOwn(target, segment)) target[segment] = {};
      if (isPlainObject(target[segment])) target = target[segment] as Doc;
      else conflict = segments.slice(0, i + 1).join(".");
    }
    if (conflict !== null) issues.push({ path: extendPath(path, key), message: MESSAGES.dottedConflict(conflict) });
    else target[segments[segments.length - 1]!] = prepare(value[key], extendPath(path, key), expandDots, issues);
  }
  return out;
}

function hasDottedKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasDottedKey);
  if (!isPlainObject(value)) return false;
  for (const key in value) if (key.includes(".") || hasDottedKey(value[key])) return true;
  return false;
}

/** ResourceValidator.expanded (./types.ts), where the resource expands dotted keys. */
export function withDottedKeysExpanded(document: Doc): Doc {
  if (!hasDottedKey(document)) return document;
  const issues: KeyIssue[] = [];
  const expanded = prepare(document, [], true, issues) as Doc;
  return issues.length === 0 ? expanded : document;
}

/** Converts values to their field's type, in place (Eve's `serialize`). */
export function convertDict(dict: DictNode, document: Doc): void {
  for (const key of Object.keys(document)) {
    const node = dict.fields.get(key);
    if (node?.converts) document[key] = convertValue(node, document[key]);
  }
}

const CONVERTED_VALUES = new Set<unknown>(["objectid", "dict"]);

function convertValue(node: FieldNode, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  let v: unknown = node.autoList && !Array.isArray(value) ? [value] : value;
  if (node.convert) v = node.convert(v);
  if (node.dict && isPlainObject(v)) convertDict(node.dict, v);
  if (Array.isArray(v)) {
    const list = v;
    if (node.list?.converts) list.forEach((item, i) => (list[i] = convertValue(node.list!, item)));
    node.items?.forEach((itemNode, i) => {
      if (i < list.length && itemNode.converts) list[i] = convertValue(itemNode, list[i]);
    });
  }
  // Eve's serialize converts the values of a valueschema only when they are ObjectIds or dicts:
  // `{"k": "1"}` against an integer valueschema stays a string, and fails its type.
  if (node.valuesrules?.converts && isPlainObject(v) && CONVERTED_VALUES.has(node.valuesrules.def.type)) {
    const mapping = v;
    for (const key of Object.keys(mapping)) mapping[key] = convertValue(node.valuesrules, mapping[key]);
  }
  for (const definition of node.definitions) if (definition.converts) v = convertValue(definition, v);
  return v;
}

export interface NormalizeRun {
  mode: ValidationMode;
  original: Doc | undefined;
  /** Top-level fields that failed `readonly` (null until one does). */
  blocked: Set<string> | null;
}

/** A value safe to store per document: defaults must not be shared between documents. */
function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone);
  if (value instanceof Date) return new Date(value.getTime());
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clone(v)]));
  return value;
}

/** Emits errors in the order Cerberus does, one emission slot after another. */
class Emitter {
  private n = 0;
  constructor(readonly level: Level) {}
  error(path: Path, rule: string, message: string): void {
    this.level.add([0, this.n++], { path, rule, message });
  }
  child(normalize: (level: Level) => void): void {
    const level = new Level();
    normalize(level);
    this.level.addAll([0, this.n++], level.resolve());
  }
}

/**
 * Coercers and default setters run synchronously, as Cerberus' do, so an async one would store
 * its promise: refused as the server's fault (500), not reported as the client's.
 */
function settled<T>(value: T, what: string): T {
  if (typeof (value as { then?: unknown } | null)?.then === "function") throw new Error(`a ${what} returned a promise; ${what}s must be synchronous`);
  return value;
}

function runCoercers(node: FieldNode, chain: Array<(v: unknown) => unknown>, value: unknown, onError: (e: unknown) => void): unknown {
  let result = value;
  for (const coerce of chain) {
    let next: unknown;
    try {
      next = coerce(result);
    } catch (error) {
      if (!(node.nullable && result === null)) onError(error);
      return result;
    }
    result = settled(next, "coercer");
  }
  return result === undefined ? null : result;
}

/** Cerberus' `__normalize_mapping` over a (sub-)document, in place. */
export function normalizeDict(dict: DictNode, document: Doc, path: Path, level: Level, run: NormalizeRun): void {
  // Most schemas rename, default and coerce nothing: five passes over the fields found nothing to do.
  if (!dict.normalizes) return;
  const out = new Emitter(level);
  const top = path.length === 0;

  for (const key of Object.keys(document)) {
    const node = dict.fields.get(key);
    if (!node) continue;
    let name = key;
    if (node.renameTo !== null && node.renameTo !== key) name = node.renameTo;
    if (node.renameHandler) {
      const handled = runCoercers(node, node.renameHandler, name, (e) =>
        out.error(extendPath(path, key), "rename_handler", `field '${key}' cannot be renamed: ${e instanceof Error ? e.message : String(e)}`),
      );
      if (typeof handled === "string") name = handled;
    }
    if (name !== key) {
      document[name] = document[key];
      delete document[key];
    }
  }

  if (dict.purgeUnknown && !dict.allowUnknown) {
    for (const key of Object.keys(document)) if (!dict.fields.has(key) && !dict.meta.has(key)) delete document[key];
  }

  for (const name of dict.order) {
    const node = dict.fields.get(name)!;
    if (!node.readonly || !Object.hasOwn(document, name)) continue;
    if (pyEqual(document[name], valueAt(run.original, extendPath(path, name)))) continue;
    out.error(extendPath(path, name), "readonly", MESSAGES.readonly);
    if (top) (run.blocked ??= new Set()).add(name);
  }

  const empty = dict.order.filter((name) => !Object.hasOwn(document, name) || (document[name] === null && !dict.fields.get(name)!.nullable));
  const storedTop = (name: string) => top && run.original !== undefined && Object.hasOwn(run.original, name);
  for (const name of empty) {
    const node = dict.fields.get(name)!;
    // Eve keeps a value the request sends (even null) and, on PATCH, one already stored.
    if (!node.hasDefault || Object.hasOwn(document, name) || (run.mode === "PATCH" && storedTop(name))) continue;
    document[name] = clone(node.defaultValue);
  }
  for (const name of empty) {
    const node = dict.fields.get(name)!;
    if (!node.defaultSetter || storedTop(name)) continue;
    let value: unknown;
    try {
      value = node.defaultSetter(document);
    } catch (error) {
      out.error(extendPath(path, name), "default_setter", MESSAGES.defaultSetter(name, error));
      continue;
    }
    document[name] = settled(value, "default setter") ?? null;
  }

  normalizeMembers(out, path, document, (key) => dict.fields.get(key as string), run);
}

/**
 * Coercion, then normalization of sub-documents and lists, for every member of a mapping (or
 * of a list, whose items Cerberus normalizes as the mapping `{index: item}`).
 */
function normalizeMembers(out: Emitter, path: Path, container: Doc | unknown[], nodeOf: (key: Segment) => FieldNode | undefined, run: NormalizeRun): void {
  const keys: Segment[] = Array.isArray(container) ? container.map((_, i) => i) : Object.keys(container);
  const slots = container as Record<Segment, unknown>;
  for (const key of keys) {
    const node = nodeOf(key);
    if (!node?.coerce) continue;
    slots[key] = runCoercers(node, node.coerce, slots[key], (e) => out.error(extendPath(path, key), "coerce", MESSAGES.coerce(key, e)));
  }
  for (const key of keys) {
    const node = nodeOf(key);
    if (node?.normalizes) normalizeContainer(out, extendPath(path, key), node, slots[key], run);
  }
}

function normalizeContainer(out: Emitter, path: Path, node: FieldNode, value: unknown, run: NormalizeRun): void {
  if (isPlainObject(value)) {
    if (node.keysrules?.normalizes) normalizeKeys(out, path, node.keysrules, value, run);
    const valuesNode = node.valuesrules;
    if (valuesNode?.normalizes) out.child((level) => normalizeMembers(new Emitter(level), path, value, () => valuesNode, run));
    if (node.dict) out.child((level) => normalizeDict(node.dict!, value, path, level, run));
  } else if (Array.isArray(value)) {
    if (node.list?.normalizes) out.child((level) => normalizeMembers(new Emitter(level), path, value, () => node.list!, run));
    else if (node.items && node.items.length === value.length) out.child((level) => normalizeMembers(new Emitter(level), path, value, (i) => node.items![i as number], run));
  }
}

/** keysrules with coercion renames keys (Cerberus normalizes the mapping `{key: key}`). */
function normalizeKeys(out: Emitter, path: Path, keysNode: FieldNode, mapping: Doc, run: NormalizeRun): void {
  const keys: Doc = Object.fromEntries(Object.keys(mapping).map((k) => [k, k]));
  out.child((level) => normalizeMembers(new Emitter(level), path, keys, () => keysNode, run));
  for (const [key, renamed] of Object.entries(keys)) {
    if (typeof renamed !== "string" && typeof renamed !== "number") continue;
    const name = String(renamed);
    if (name === key) continue;
    mapping[name] = mapping[key];
    delete mapping[key];
  }
}
