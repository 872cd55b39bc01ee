// Eve's own test auth classes (pyeve/eve tests/auth.py) and the reduced domain its auth tests
// run on, so test/auth can replay those scenarios over HTTP: fixed credentials, the `admin`
// role check, and the owner value user-restricted access stamps (Eve's set_request_auth_value,
// here ctx.setRequestAuthValue). The domain keeps, from tests/test_settings.py, what the auth
// tests reach: `contacts` (at /arbitraryurl), `users` and `restricted` over the same
// collection, `empty` and the read-only `payments`.
import { BasicAuth, HMACAuth, TokenAuth } from "../../src/auth/auth.ts";
import type { RequestContext } from "../../src/context.ts";
import type { Doc } from "../../src/drivers/types.ts";
import type { ResourceSettings, Settings } from "../../src/settings/types.ts";
import type { TestApi } from "./api.ts";

/** Eve's checks pass when no role is required, or when `admin` is one of those allowed. */
const adminAllowed = (allowedRoles: string[]) => allowedRoles.length === 0 || allowedRoles.includes("admin");

/** `admin` or `alt`, password `secret`; records `requestAuthValue` (Eve's tests switch it to "alt"). */
export class ValidBasicAuth extends BasicAuth {
  requestAuthValue: unknown = "admin";

  override checkAuth(username: string, password: string, allowedRoles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean {
    ctx.setRequestAuthValue(this.requestAuthValue);
    return (username === "admin" || username === "alt") && password === "secret" && adminAllowed(allowedRoles);
  }
}

/** The token `test_token`. */
export class ValidTokenAuth extends TokenAuth {
  override checkAuth(token: string, allowedRoles: string[]): boolean {
    return token === "test_token" && adminAllowed(allowedRoles);
  }
}

/** `Authorization: admin:secret`; records the user id. */
export class ValidHMACAuth extends HMACAuth {
  override async checkAuth(userid: string, hmacHash: string, _headers: Headers, _data: string, allowedRoles: string[], _resource: string | null, _method: string, ctx: RequestContext): Promise<boolean> {
    ctx.setRequestAuthValue(userid);
    return userid === "admin" && hmacHash === "secret" && adminAllowed(allowedRoles);
  }
}

/** The Authorization headers Eve's tests send. */
export const EVE_AUTH = {
  /** admin:secret */
  basic: { Authorization: "Basic YWRtaW46c2VjcmV0" },
  /** alt:secret */
  alt: { Authorization: "Basic YWx0OnNlY3JldA==" },
  /** admin:secreu */
  invalid: { Authorization: "Basic YWRtaW46c2VjcmV1" },
  /** test_token as a Basic username */
  token: { Authorization: "Basic dGVzdF90b2tlbjo=" },
  bearer: { Authorization: "Token test_token" },
  hmac: { Authorization: "admin:secret" },
} as const;

const contactSchema = {
  ref: { type: "string", minlength: 25, maxlength: 25, required: true, unique: true },
  media: { type: "media" },
  prog: { type: "integer" },
} satisfies ResourceSettings["schema"];

/** Eve's test domain, reduced to what tests/auth.py reaches. */
export function eveAuthDomain(): Record<string, ResourceSettings> {
  return {
    contacts: { url: "arbitraryurl", item_title: "contact", datasource: { filter: { username: { $exists: false } } }, schema: { ...contactSchema } },
    users: {
      url: "users",
      item_title: "user",
      additional_lookup: { url: 'regex("[\\w]+")', field: "ref" },
      resource_methods: ["DELETE", "POST", "GET"],
      datasource: { source: "contacts", filter: { username: { $exists: true } }, projection: { username: 1, ref: 1 } },
      schema: { ...contactSchema, username: { type: "string", required: true } },
    },
    restricted: { url: "restricted", datasource: { source: "contacts" }, schema: { ...contactSchema } },
    empty: { schema: { inv_number: { type: "string" }, person: { type: "objectid", data_relation: { resource: "contacts" } } } },
    payments: { resource_methods: ["GET"], item_methods: ["GET"] },
  };
}

/** Eve's globals for its test settings, with the domain above. */
export function eveAuthSettings(overrides: Partial<Settings> = {}): Settings {
  return {
    RESOURCE_METHODS: ["GET", "POST", "DELETE"],
    ITEM_METHODS: ["GET", "PATCH", "DELETE", "PUT"],
    DOMAIN: eveAuthDomain(),
    ...overrides,
  };
}

/** A 25-character ref, unique per number. */
export function ref(n: number): string {
  return `ref${String(n).padStart(22, "0")}`;
}

/**
 * Eve's fixtures, inserted as its tests insert them (straight into the database, not through
 * the API): `contacts` documents without an owner, two `users` (with a username), payments.
 */
export async function seedEveFixtures(api: TestApi, contacts = 30): Promise<{ contactIds: unknown[]; users: Doc[] }> {
  const app = api.handler.app;
  const domain = app.config.DOMAIN;
  const stored: Doc[] = Array.from({ length: contacts }, (_, i) => ({ ref: ref(i), prog: i }));
  const users: Doc[] = [
    { ref: ref(1000), prog: 1000, username: "USERNAMEAAA" },
    { ref: ref(1001), prog: 1001, username: "USERNAMEBBB" },
  ];
  await app.data.insert(null, domain.contacts!, [...stored, ...users]);
  await app.data.insert(null, domain.payments!, Array.from({ length: 10 }, (_, i) => ({ a_string: `payment${i}`, a_number: i })));
  return { contactIds: stored.map((doc) => doc._id), users };
}
