// Cerberus' error bookkeeping, reproduced so that `_issues` comes out as Eve sends it: every
// validator level keeps its own error list, re-sorted after each addition with Cerberus'
// (non-strict) ordering and CPython's list.sort, then BasicErrorHandler builds the tree and
// Eve unpacks single-message lists unless VALIDATION_ERROR_AS_LIST.
import type { Issues } from "./types.ts";
import { pyRepr, pyStr } from "./pyrepr.ts";

export type Segment = string | number;
export type Path = readonly Segment[];

/**
 * `path` and one more segment. A top-level field's path is a literal of one: a spread starts a
 * larger array, about 100 bytes more for each (a POST of one document: 25.1-26.0 -> 24.3 KB).
 */
export function extendPath(path: Path, segment: Segment): Path {
  return path.length === 0 ? [segment] : [...path, segment];
}

/** One of Cerberus' ValidationErrors, as its handler needs it. */
export interface Entry {
  path: Path;
  /** The failing rule; null for custom errors and unknown fields (they sort first). */
  rule: string | null;
  message?: string;
  /** Errors of a child validator (a sub-document, list items, keys or values). */
  group?: Level;
  /** `*of` rules: the errors of each definition, shown under "<rule> definition <i>". */
  definitions?: Level[];
}

/**
 * When an entry was emitted, as a sortable tuple: the order in which Cerberus would have
 * called `_error`, whatever order everest's (partly asynchronous, partly JSON Schema) checks
 * actually found the errors in.
 */
export type EmissionKey = readonly number[];

interface Op {
  key: EmissionKey;
  entries: Entry[];
}

function compareKeys(a: EmissionKey, b: EmissionKey): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** The errors of one (child) validator. */
export class Level {
  private readonly ops: Op[] = [];
  /**
   * Made by the first group: most levels (a sub-document's, a list's) never open one, and the
   * others a few, found by a scan (a Map and a key string per document cost more).
   */
  private groups: Array<{ field: string; rule: string; level: Level }> | null = null;

  /** A child validator's level joins its parent's errors with its first error. */
  constructor(private readonly attach?: () => void) {}

  private push(op: Op): void {
    if (!this.ops.length) this.attach?.();
    this.ops.push(op);
  }

  /** Cerberus' `_error(field, code, …)`: one error, then the list is re-sorted. */
  add(key: EmissionKey, entry: Entry): void {
    this.push({ key, entries: [entry] });
  }

  /** Cerberus' `_error(errors)`: several at once, one re-sort (child normalization errors). */
  addAll(key: EmissionKey, entries: Entry[]): void {
    if (entries.length) this.push({ key, entries });
  }

  /** The child validator a group rule (`schema`, `items`, `keysrules`, `valuesrules`) runs. */
  group(path: Path, rule: string, key: EmissionKey): Level {
    const field = String(path[path.length - 1]);
    const groups = (this.groups ??= []);
    for (const group of groups) if (group.field === field && group.rule === rule) return group.level;
    const level: Level = new Level(() => this.add(key, { path, rule, group: level }));
    groups.push({ field, rule, level });
    return level;
  }

  isEmpty(): boolean {
    return this.ops.length === 0;
  }

  /** The list as Cerberus ends up with it: replayed in emission order, sorted after each add. */
  resolve(): Entry[] {
    const ops = [...this.ops].sort((a, b) => compareKeys(a.key, b.key));
    const list: Entry[] = [];
    for (const op of ops) {
      list.push(...op.entries);
      // From PY_SORT_EXACT entries on pySort is a stable sort: sorting once at the end gives
      // the same list, where sorting after each add made a document of 200,000 unknown
      // fields take minutes (n adds, each sorting n).
      if (list.length < PY_SORT_EXACT) pySort(list, entryLt);
    }
    if (list.length >= PY_SORT_EXACT) pySort(list, entryLt);
    return list;
  }
}

/** Cerberus' compare_paths_lt (1.3): not strict, equal paths compare "less". */
function pathsLt(x: Path, y: Path): boolean {
  const n = Math.min(x.length, y.length);
  let samePrefix = true;
  for (let i = 0; i < n; i++) {
    if (x[i] !== y[i]) {
      samePrefix = false;
      break;
    }
  }
  if (samePrefix) return x.length === n;
  for (let i = 0; i < n; i++) {
    const a = x[i]!;
    const b = y[i]!;
    if (typeof a !== typeof b) return true;
    if (a === b) continue;
    return a < b;
  }
  return false;
}

function pathsEqual(x: Path, y: Path): boolean {
  return x.length === y.length && x.every((s, i) => s === y[i]);
}

const NO_RULE: Path = [];

/** ValidationError.__lt__: document path first, then schema path (custom errors have none). */
function entryLt(a: Entry, b: Entry): boolean {
  if (!pathsEqual(a.path, b.path)) return pathsLt(a.path, b.path);
  return pathsLt(a.rule === null ? NO_RULE : [a.rule], b.rule === null ? NO_RULE : [b.rule]);
}

/** The longest list pySort orders exactly as Python's sort; longer ones get a stable sort. */
const PY_SORT_EXACT = 64;

/**
 * CPython 3.11's list.sort for the lists Cerberus sorts (count_run, then binary insertion for
 * fewer than 64 items). With a non-strict `<`, equal errors end up in the order CPython's
 * algorithm leaves them in, which is not insertion order; longer lists fall back to a stable sort.
 */
export function pySort<T>(list: T[], lt: (a: T, b: T) => boolean): void {
  const n = list.length;
  if (n < 2) return;
  if (n >= PY_SORT_EXACT) {
    list.sort((a, b) => (lt(a, b) && !lt(b, a) ? -1 : lt(b, a) && !lt(a, b) ? 1 : 0));
    return;
  }
  let run = 2;
  if (lt(list[1]!, list[0]!)) {
    while (run < n && lt(list[run]!, list[run - 1]!)) run++;
    list.splice(0, run, ...list.slice(0, run).reverse());
  } else {
    while (run < n && !lt(list[run]!, list[run - 1]!)) run++;
  }
  for (let start = run; start < n; start++) {
    const pivot = list[start]!;
    let l = 0;
    let r = start;
    do {
      const p = l + ((r - l) >> 1);
      if (lt(pivot, list[p]!)) r = p;
      else l = p + 1;
    } while (l < r);
    for (let p = start; p > l; p--) list[p] = list[p - 1]!;
    list[l] = pivot;
  }
}

interface TreeNode {
  messages: string[];
  children: Map<Segment, TreeNode>;
}

const newNode = (): TreeNode => ({ messages: [], children: new Map() });

type PathMap = (path: Path) => Segment[];

const identity: PathMap = (path) => [...path];

function insert(tree: TreeNode, path: Segment[], message: string): void {
  let node = tree;
  for (const segment of path) {
    let child = node.children.get(segment);
    if (!child) {
      child = newNode();
      node.children.set(segment, child);
    }
    node = child;
  }
  node.messages.push(message);
}

/** BasicErrorHandler: messages at their path, child errors below, `*of` definitions renamed. */
function insertEntries(tree: TreeNode, entries: Entry[], map: PathMap): void {
  for (const entry of entries) {
    if (entry.group) {
      insertEntries(tree, entry.group.resolve(), map);
      continue;
    }
    insert(tree, map(entry.path), entry.message!);
    if (!entry.definitions) continue;
    const shown = map(entry.path);
    entry.definitions.forEach((definition, i) => {
      const label = `${entry.rule} definition ${i}`;
      insertEntries(tree, definition.resolve(), (path) => [...shown, label, ...map(path).slice(shown.length)]);
    });
  }
}

function render(node: TreeNode, asList: boolean): Issues {
  const out: Issues = {};
  for (const [segment, child] of node.children) {
    const value: Array<string | Issues> = [...child.messages];
    if (child.children.size) value.push(render(child, asList));
    // A refused key such as "__proto__" is reported under its own name, never as a prototype.
    Object.defineProperty(out, String(segment), { value: !asList && value.length === 1 ? value[0]! : value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** `_issues` from the root validator's errors. */
export function renderIssues(root: Level, asList: boolean): Issues {
  // A valid document (nearly every one) has no tree to build: validation asks once or twice per document.
  if (root.isEmpty()) return {};
  const tree = newNode();
  insertEntries(tree, root.resolve(), identity);
  return render(tree, asList);
}

// Cerberus' BasicErrorHandler messages, and Eve's own.
export const MESSAGES = {
  required: "required field",
  unknown: "unknown field",
  nullable: "null value not allowed",
  empty: "empty values not allowed",
  readonly: "field is read-only",
  type: (constraint: unknown) => `must be of ${pyStr(constraint)} type`,
  minlength: (n: unknown) => `min length is ${pyStr(n)}`,
  maxlength: (n: unknown) => `max length is ${pyStr(n)}`,
  min: (n: unknown) => `min value is ${pyStr(n)}`,
  max: (n: unknown) => `max value is ${pyStr(n)}`,
  regex: (pattern: string) => `value does not match regex '${pattern}'`,
  unallowedValue: (value: unknown) => `unallowed value ${pyStr(value)}`,
  unallowedValues: (values: unknown[]) => `unallowed values ${pyRepr(values)}`,
  missingMembers: (values: unknown[]) => `missing members ${values.length ? `{${values.map(pyRepr).join(", ")}}` : "set()"}`,
  itemsLength: (expected: number, actual: number) => `length of list should be ${expected}, it is ${actual}`,
  dependencyField: (name: string) => `field '${name}' is required`,
  dependencyValues: (constraint: unknown) => `depends on these values: ${pyStr(constraint)}`,
  excludes: (excluded: string[], field: Segment) => `${excluded.map((f) => `'${f}'`).join(", ")} must not be present with '${String(field)}'`,
  coerce: (field: Segment, error: unknown) => `field '${String(field)}' cannot be coerced: ${errorText(error)}`,
  defaultSetter: (field: Segment, error: unknown) => `default value for '${String(field)}' cannot be set: ${errorText(error)}`,
  anyof: "no definitions validate",
  allof: "one or more definitions don't validate",
  noneof: "one or more definitions validate",
  oneof: "none or more than one rule validate",
  notUnique: (value: unknown) => `value '${pyStr(value)}' is not unique`,
  relation: (value: unknown, resource: string, field: string) => `value '${pyStr(value)}' must exist in resource '${resource}', field '${field}'.`,
  versionedRelation: (value: unknown, resource: string, field: string, version: unknown) =>
    `value '${pyStr(value)}' must exist in resource '${resource}', field '${field}' at version '${pyStr(version)}'.`,
  versionedRelationShape: (field: string, versionField: string) => `versioned data_relation must be a dict with fields '${field}' and '${versionField}'`,
  unversionedRelation: (resource: string) => `can't save a version with data_relation if '${resource}' isn't versioned`,
  operatorKey: "field names starting with '$' are not allowed",
  reservedKey: (key: string) => `field name '${key}' is not allowed`,
  dottedConflict: (prefix: string) => `cannot be expanded: '${prefix}' is not a dict`,
  tooLarge: "the result would be too large a number",
};

/** Python's `str(exception)`. */
function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
