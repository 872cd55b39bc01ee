// What endpoints, methods and read helpers use of the application, and nothing else of it: the
// compiled settings, the data layer, hooks, document features, validators (and update
// operators) and access control.
// Built once by the App (src/app.ts) and passed explicitly; nothing per-request lives here.
import type { AccessControl } from "./auth/access.ts";
import type { DataLayer } from "./data/layer.ts";
import type { Hooks } from "./events/hooks.ts";
import type { FeaturePipeline } from "./features/pipeline.ts";
import type { KeptJson } from "./render/kept-json-loader.ts";
import type { UniqueClaims } from "./methods/unique-claims.ts";
import type { Config, Resource } from "./settings/normalize.ts";
import type { ResourceValidator } from "./validation/types.ts";
import type { OperatorSchema } from "./validation/operators.ts";

export interface Services {
  readonly config: Config;
  readonly data: DataLayer;
  readonly hooks: Hooks;
  readonly features: FeaturePipeline;
  readonly validators: ReadonlyMap<string, ResourceValidator>;
  /** The update operators of a resource that has some (UPDATE_OPERATORS), checked against its schema; compiled on first use. */
  readonly operators: (resource: Resource) => Promise<OperatorSchema>;
  readonly access: AccessControl;
  /** Response documents' JSON kept per stored version (src/render/kept-json.ts). */
  readonly rendered: KeptJson;
  /** Unique values held from their lookup to their write (src/methods/unique-claims.ts). */
  readonly claims: UniqueClaims;
}
