// The contract between the write methods and the validator. The validator owns everything
// schema-driven about an incoming document: type conversion (docs/decisions.md §3), coercion,
// defaults, every rule, and the Cerberus-worded issues.
import type { Doc, Filter } from "../drivers/types.ts";
import type { Config, Resource } from "../settings/normalize.ts";

/** field -> message, list of messages, or nested Issues (dicts; list items keyed by index). */
export interface Issues {
  [field: string]: string | Array<string | Issues> | Issues;
}

export type ValidationMode = "POST" | "PUT" | "PATCH";

/** What the validator may ask of the rest of the application, per request. */
export interface ValidationEnv {
  config: Config;
  resource: Resource;
  /** The stored document, for PUT and PATCH. */
  original?: Doc;
  /**
   * Looks a document up in a resource (honouring its datasource source/filter, soft delete
   * excluded unless asked). Used by unique and data_relation.
   * `ignoreFilter`: skip the datasource filter (Eve's `unique` and `unique_to_user` check the
   * whole collection; `unique_within_resource` and data_relation honour the filter).
   * A versioned data_relation looks in `<resource><VERSIONS>` (e.g. `people_versions`), the
   * shadow collection of that resource, by `<ID_FIELD><VERSION_ID_SUFFIX>` and `<VERSION>`.
   */
  findOne(resource: string, filter: Filter, options?: { includeDeleted?: boolean; ignoreFilter?: boolean }): Promise<Doc | null>;
  /** The authenticated user's value for auth_field (unique_to_user). */
  requestAuthValue?: unknown;
  /**
   * Top-level fields whose `unique` the store's unique index enforces when the documents are
   * written (a new document's scalar value only). Their lookup is left to the index, and made
   * only for a document refused for another reason, so that its issues list every rule as Eve's
   * do; a write the index refuses is validated again without this to report it.
   */
  uniqueByIndex?: ReadonlySet<string>;
}

export interface ValidationResult {
  valid: boolean;
  /**
   * The document to store: converted, coerced, defaults applied. For PATCH, the normalised
   * updates (dotted keys expanded into nested objects).
   */
  document: Doc;
  issues: Issues;
}

export interface ResourceValidator {
  /**
   * Whether the application's own code sees the stored document while validating: custom rules
   * and field validators are handed it (RuleContext.original), and may keep or change it.
   */
  readonly showsOriginal: boolean;
  /** The result itself when nothing had to be waited for (most documents), else its promise. */
  validate(document: Doc, mode: ValidationMode, env: ValidationEnv): ValidationResult | Promise<ValidationResult>;
  /**
   * A bulk POST: each document validated, plus `unique` across the documents of the batch
   * (docs/decisions.md §5: two documents of one request sharing a unique value both fail).
   */
  validateMany(documents: Doc[], env: ValidationEnv): Promise<ValidationResult[]>;
  /**
   * The document with its dotted keys expanded as validate() will expand them (`{"a.b": 1}` →
   * `{"a": {"b": 1}}`, where the resource's NORMALIZE_DOTTED_FIELDS is on), for what must judge
   * the fields a write sets before validation does: field rules, and the fields a write by filter
   * sends to every document. The document itself when it has no dotted key, or when expanding it
   * finds a problem that validation will refuse it for.
   */
  expanded(document: Doc): Doc;
}
