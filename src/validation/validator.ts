// A resource's validator: compiled once at start-up, then per document: keys checked and
// dotted keys expanded, values converted, Cerberus' normalization, the rules (JSON Schema plus
// closures, or closures alone), and `_issues` as Eve renders them.
import type { Doc } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";
import { compileResource } from "./compile.ts";
import type { DictNode, DocRun, UniqueCandidate } from "./tree.ts";
import { Level, MESSAGES, renderIssues } from "./errors.ts";
import type { ValidatorExtensions } from "./extensions.ts";
import type { JsonEngine } from "./jsonschema.ts";
import { convertDict, normalizeDict, prepare, withDottedKeysExpanded, type KeyIssue } from "./normalize.ts";
import { pyRepr } from "./pyrepr.ts";
import { settle } from "./rules.ts";
import { validateDict } from "./walk.ts";
import { usableSchema } from "./schema-check.ts";
import type { Issues, ResourceValidator, ValidationEnv, ValidationMode, ValidationResult } from "./types.ts";

/**
 * `closures` (the default): every rule by compiled closures. `jsonschema`: structural rules
 * checked by @cfworker/json-schema against a schema generated at start-up, the others by
 * closures. Same results; closures measured five to six times faster (bench/VALIDATION.md).
 */
export type ValidationEngine = "jsonschema" | "closures";

let jsonEngineModule: Promise<typeof import("./jsonschema.ts")> | undefined;

/**
 * The jsonschema engine and @cfworker/json-schema, imported when a validator first needs them:
 * a module of their own in a bundle (the Workers build), which the default engine never loads.
 */
const loadJsonEngine = () => (jsonEngineModule ??= import("./jsonschema.ts"));

export interface CompileOptions {
  engine?: ValidationEngine;
}

// The state of one document's validation, and its result, are class instances rather than
// literals: a bulk insert holds them for every document of the batch, which would have V8
// allocate every later single write's in old space (docs/performance.md).

class Checked {
  constructor(
    readonly document: Doc,
    readonly level: Level,
    readonly run: DocRun,
  ) {}
}

class Run implements DocRun {
  pending = Array.of<Promise<unknown>>();
  badType: Set<string> | null = null;
  blocked: Set<string> | null = null;
  unique = Array.of<UniqueCandidate>();
  constructor(
    readonly mode: ValidationMode,
    readonly env: ValidationEnv,
    readonly config: Config,
    readonly resource: Resource,
    readonly root: Doc,
    readonly original: Doc | undefined,
    readonly normalized: boolean,
  ) {}
}

class Result implements ValidationResult {
  constructor(
    readonly valid: boolean,
    readonly document: Doc,
    readonly issues: Issues,
  ) {}
}

function isPlainDocument(value: unknown): value is Doc {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Equal for two candidates exactly when they are of one field and their values' reprs are equal.
 * A string, the usual unique value, stands for itself behind a character no repr starts with.
 */
const batchKey = ({ field, value }: UniqueCandidate): string =>
  typeof value === "string" ? `${field}\u0000\u0001${value}` : `${field}\u0000${pyRepr(value)}`;

export function compileValidator(resource: Resource, config: Config, extensions: ValidatorExtensions = {}, options: CompileOptions = {}): ResourceValidator {
  const root: DictNode = compileResource(resource, config, extensions, usableSchema(resource, config, extensions));
  // The jsonschema engine's schemas are compiled as soon as its module is loaded (asked for
  // here, so usually before the first document); a document waits for them only until then.
  // Compiling stays synchronous, and the first validation reports a failure to load.
  let json: JsonEngine | null = null;
  let jsonReady: Promise<unknown> | null = null;
  if (options.engine === "jsonschema") {
    jsonReady = loadJsonEngine().then((engine) => (json = engine.compileJsonEngine(root)));
    jsonReady.catch(() => {});
  }
  const expandDots = (resource.raw.normalize_dotted_fields ?? config.NORMALIZE_DOTTED_FIELDS) !== false;
  const asList = config.VALIDATION_ERROR_AS_LIST === true;

  // Not async, like validate below: a document with nothing to wait for (no custom async rule,
  // uniqueness left to the index, the JSON engine loaded or not used) is checked without a
  // promise, where two async frames cost every write their promises and microtask turns.
  function check(input: Doc, mode: ValidationMode, env: ValidationEnv): Checked | Promise<Checked> {
    if (jsonReady !== null && json === null) return jsonReady.then(() => checkNow(input, mode, env));
    return checkNow(input, mode, env);
  }

  function checkNow(input: Doc, mode: ValidationMode, env: ValidationEnv): Checked | Promise<Checked> {
    if (!isPlainDocument(input)) throw new TypeError(`a document must be an object, got ${pyRepr(input)}`);
    const keyIssues: KeyIssue[] = [];
    const document = prepare(input, [], expandDots, keyIssues) as Doc;
    const level = new Level();
    keyIssues.forEach((issue, i) => level.add([-1, i], { path: issue.path, rule: null, message: issue.message }));
    convertDict(root, document);

    const normalized = mode !== "PATCH" || resource.normalize_on_patch;
    const run = new Run(mode, env, config, resource, document, mode === "POST" ? undefined : env.original, normalized);
    if (normalized) normalizeDict(root, document, [], level, run);

    const update = mode === "PATCH";
    const residual = json !== null && json.check(document, run, level, update);
    validateDict({ doc: run, level, path: [], residual, update }, root, document);
    const checked = new Checked(document, level, run);
    return run.pending.length ? settle(run.pending).then(() => checked) : checked;
  }

  function result({ document, level }: Checked): ValidationResult {
    const issues = renderIssues(level, asList);
    return new Result(Object.keys(issues).length === 0, document, issues);
  }

  /** Whether a checked document has issues before its deferred unique lookups. */
  const refused = ({ level }: Checked) => Object.keys(renderIssues(level, asList)).length > 0;

  /** The unique lookups left to the store's index, made after all (the request fails anyway). */
  async function lookUpDeferred(checked: Checked[]): Promise<void> {
    await Promise.all(checked.flatMap(({ run }) => run.unique.map((candidate) => candidate.deferred?.())));
  }

  const deferring = (checked: Checked) => checked.run.unique.some((candidate) => candidate.deferred);

  /** One document's result, after its deferred lookups where it failed anyway. */
  const finish = (checked: Checked): ValidationResult | Promise<ValidationResult> =>
    deferring(checked) && refused(checked) ? lookUpDeferred([checked]).then(() => result(checked)) : result(checked);

  return {
    showsOriginal: Boolean(extensions.rules || extensions.validators),

    validate(document, mode, env) {
      const checking = check(document, mode, env);
      return checking instanceof Promise ? checking.then(finish) : finish(checking);
    },

    expanded: (document) => (expandDots ? withDottedKeysExpanded(document) : document),

    async validateMany(documents, env) {
      const checked = await Promise.all(documents.map((document) => check(document, "POST", env)));
      // One refused document fails the batch, whose report then names every document's issues.
      if (checked.some(deferring) && checked.some(refused)) await lookUpDeferred(checked);
      // A value some earlier document of the batch holds is not unique either (docs/decisions.md §5).
      const seen = new Set<string>();
      for (const { run } of checked) {
        const keys = run.unique.map(batchKey);
        run.unique.forEach((candidate, i) => {
          if (!candidate.reported && seen.has(keys[i]!)) {
            candidate.level.add(candidate.key, { path: candidate.path, rule: null, message: MESSAGES.notUnique(candidate.value) });
          }
        });
        for (const key of keys) seen.add(key);
      }
      return checked.map(result);
    },
  };
}
