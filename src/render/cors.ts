// Cross-origin headers as Eve sends them, except that an origin CORS does not allow gets no
// Access-Control-Allow-Origin at all (docs/decisions.md §5) instead of an empty one.
import type { Config } from "../settings/normalize.ts";
import type { PlainHeaders } from "../http/known-body.ts";

export interface CorsPolicy {
  origins: Set<string>;
  any: boolean;
  patterns: RegExp[];
  allowHeaders: string;
  exposeHeaders: string;
  maxAge: string;
  credentials: boolean;
}

function list(value: unknown): string[] {
  if (value == null) return [];
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

/** Compiled once at start-up; null when CORS is off. */
export function compileCors(config: Config): CorsPolicy | null {
  const origins = list(config.X_DOMAINS);
  const patterns = list(config.X_DOMAINS_RE);
  if (origins.length === 0 && patterns.length === 0) return null;
  return {
    origins: new Set(origins),
    any: origins.includes("*"),
    // Eve uses re.match (anchored at the start); X_DOMAINS_RE entries are expected to end in $.
    // Python's re.match anchors at the start whatever the pattern holds: `^a|b` lets b float in
    // JavaScript, so every pattern is wrapped, its own ^ included.
    patterns: patterns.map((p) => new RegExp(`^(?:${p})`)),
    allowHeaders: list(config.X_HEADERS).join(", "),
    exposeHeaders: list(config.X_EXPOSE_HEADERS).join(", "),
    maxAge: String(config.X_MAX_AGE),
    credentials: config.X_ALLOW_CREDENTIALS === true,
  };
}

export function applyCors(policy: CorsPolicy | null, origin: string | null, allowMethods: string, headers: PlainHeaders): void {
  if (!policy) return;
  // Whether Allow-Origin is there at all depends on the Origin, so every answer says so: a shared
  // cache must not hand an answer made without an Origin (or for a refused one) to an allowed site.
  headers.vary = headers.vary ? `${headers.vary}, Origin` : "Origin";
  if (!origin) return;
  if (policy.any || policy.origins.has(origin) || policy.patterns.some((p) => p.test(origin))) headers["access-control-allow-origin"] = origin;
  headers["access-control-allow-headers"] = policy.allowHeaders;
  headers["access-control-expose-headers"] = policy.exposeHeaders;
  headers["access-control-allow-methods"] = allowMethods;
  headers["access-control-max-age"] = policy.maxAge;
  if (policy.credentials) headers["access-control-allow-credentials"] = "true";
}
