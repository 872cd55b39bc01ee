// Security schemes from the auth classes the settings use (AUTH and each resource's
// `authentication`): Basic, bearer tokens, HMAC signatures, or a custom class described loosely.
// Operations list the roles they require; public methods get no requirement at all.
import { endpointRequirement } from "../auth/access.ts";
import { BasicAuth, HMACAuth, TokenAuth } from "../auth/auth.ts";
import type { Config, Resource } from "../settings/normalize.ts";

export interface SecurityScheme {
  type: "http" | "apiKey";
  scheme?: string;
  in?: "header";
  name?: string;
  description: string;
}

const SCHEMES: Record<string, SecurityScheme> = {
  basicAuth: { type: "http", scheme: "basic", description: "HTTP Basic: Authorization: Basic base64(username:password)" },
  tokenAuth: {
    type: "http",
    scheme: "bearer",
    description: "a token: Authorization: Bearer <token> (also accepted as Token <token>, bare, or as a Basic username without password)",
  },
  hmacAuth: {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description: "HMAC: Authorization: <userid>:<hex HMAC-SHA256 of the raw request body under the user's secret>",
  },
  customAuth: {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description: "a custom auth class: the credentials it expects are not described here",
  },
};

/** Which scheme an AUTH / authentication value (class or instance) stands for; null when none. */
function schemeOf(value: unknown): string | null {
  if (value === null || value === undefined || value === false) return null;
  // A class or an instance of one (src/auth/access.ts instantiates classes).
  const is = (cls: abstract new (...args: never[]) => unknown) => value instanceof cls || value === cls || (typeof value === "function" && value.prototype instanceof cls);
  if (is(HMACAuth)) return "hmacAuth";
  if (is(TokenAuth)) return "tokenAuth";
  if (is(BasicAuth)) return "basicAuth";
  return "customAuth";
}

export type Requirement = Array<Record<string, string[]>>;

export interface SecurityPlan {
  schemes: Record<string, SecurityScheme>;
  /** The `security` of an operation; undefined when the API uses no auth at all. */
  forOperation(resource: Resource | null, method: string, item: boolean): Requirement | undefined;
}

export function securityPlan(config: Config): SecurityPlan {
  const used = new Set<string>();
  const schemeFor = (resource: Resource | null) => {
    const scheme = schemeOf(resource ? resource.authentication : config.AUTH);
    if (scheme) used.add(scheme);
    return scheme;
  };
  for (const resource of Object.values(config.DOMAIN)) schemeFor(resource);
  schemeFor(null);
  const schemes: Record<string, SecurityScheme> = {};
  for (const name of used) schemes[name] = SCHEMES[name]!;
  return {
    schemes,
    forOperation(resource, method, item) {
      if (used.size === 0) return undefined;
      const scheme = schemeFor(resource);
      const { publicMethods, roles } = endpointRequirement(config, resource, item, method);
      if (!scheme || publicMethods.includes(method)) return [];
      return [{ [scheme]: roles }];
    },
  };
}
