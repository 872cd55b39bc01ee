// Builds validators from a DOMAIN and gives them a ValidationEnv over in-memory arrays, so the
// rules are tested without a driver. Every suite runs against both engines: they must agree.
import { normalizeSettings } from "../../src/settings/normalize.ts";
import type { FieldSchema, Settings } from "../../src/settings/types.ts";
import type { Doc, Filter } from "../../src/drivers/types.ts";
import { compileValidator, type ValidationEngine, type ValidatorExtensions } from "../../src/validation/index.ts";
import type { ValidationEnv, ValidationMode, ValidationResult } from "../../src/validation/types.ts";

export const ENGINES: ValidationEngine[] = ["jsonschema", "closures"];

export type Store = Record<string, Doc[]>;

function same(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a && b && typeof a === "object" && typeof b === "object" && "_bsontype" in a) return String(a) === String(b);
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The values a dotted path reaches, through lists as MongoDB goes through them. */
function reach(value: unknown, parts: string[]): unknown[] {
  if (!parts.length) return Array.isArray(value) ? [value, ...value] : [value ?? null];
  if (Array.isArray(value)) return value.flatMap((item) => reach(item, parts));
  if (value === null || typeof value !== "object") return [null];
  return reach((value as Doc)[parts[0]!], parts.slice(1));
}

/** Enough of MongoDB's filter semantics for the validator's lookups: equality and $ne. */
export function matches(document: Doc, filter: Filter): boolean {
  return Object.entries(filter).every(([path, condition]) => {
    const values = reach(document, path.split("."));
    if (condition && typeof condition === "object" && "$ne" in condition) return !values.some((v) => same(v, (condition as { $ne: unknown }).$ne));
    return values.some((v) => same(v, condition));
  });
}

export interface Lookup {
  resource: string;
  filter: Filter;
  options?: { includeDeleted?: boolean; ignoreFilter?: boolean };
}

export interface Harness {
  validate(resource: string, document: unknown, mode?: ValidationMode, envExtra?: Partial<ValidationEnv>): Promise<ValidationResult>;
  validateMany(resource: string, documents: unknown[], envExtra?: Partial<ValidationEnv>): Promise<ValidationResult[]>;
  store: Store;
  lookups: Lookup[];
}

export function harness(settings: Settings, options: { engine: ValidationEngine; extensions?: ValidatorExtensions; store?: Store }): Harness {
  const config = normalizeSettings(settings);
  const store: Store = options.store ?? {};
  const lookups: Lookup[] = [];
  const validators = new Map(Object.values(config.DOMAIN).map((r) => [r.name, compileValidator(r, config, options.extensions, { engine: options.engine })]));
  const env = (resource: string, extra: Partial<ValidationEnv> = {}): ValidationEnv => ({
    config,
    resource: config.DOMAIN[resource]!,
    findOne: async (name, filter, lookupOptions) => {
      lookups.push({ resource: name, filter, options: lookupOptions });
      const target = config.DOMAIN[name];
      const scope = !lookupOptions?.ignoreFilter && target?.datasource.filter ? { ...target.datasource.filter, ...filter } : filter;
      const found = (store[name] ?? []).find((d) => (lookupOptions?.includeDeleted || d._deleted !== true) && matches(d, scope));
      return found ?? null;
    },
    ...extra,
  });
  return {
    store,
    lookups,
    validate: async (resource, document, mode = "POST", extra) => validators.get(resource)!.validate(document as Doc, mode, env(resource, extra)),
    validateMany: (resource, documents, extra) => validators.get(resource)!.validateMany(documents as Doc[], env(resource, extra)),
  };
}

/** A one-resource harness: `schema` is the resource's schema, `settings` extra globals. */
export function single(schema: Record<string, FieldSchema>, engine: ValidationEngine, extra: { settings?: Settings; resource?: Record<string, unknown>; extensions?: ValidatorExtensions; store?: Store } = {}) {
  const h = harness({ ...extra.settings, DOMAIN: { ...(extra.settings?.DOMAIN ?? {}), things: { schema, ...extra.resource } } }, { engine, extensions: extra.extensions, store: extra.store });
  return {
    ...h,
    check: (document: unknown, mode: ValidationMode = "POST", envExtra?: Partial<ValidationEnv>) => h.validate("things", document, mode, envExtra),
    /** The `_issues` of a document (an empty object when it is valid). */
    issues: async (document: unknown, mode: ValidationMode = "POST", envExtra?: Partial<ValidationEnv>) => (await h.validate("things", document, mode, envExtra)).issues,
  };
}
