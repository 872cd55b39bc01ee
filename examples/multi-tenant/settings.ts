// A notes API shared by several users, each of whom sees and changes only their own notes.
//
//   npm run serve -- examples/multi-tenant/settings.ts --port 5000
//   curl -H "Authorization: Bearer alice-token" -H "Content-Type: application/json" \
//        -d '{"title": "groceries"}' http://127.0.0.1:5000/notes
//   curl -H "Authorization: Bearer bob-token" http://127.0.0.1:5000/notes     # bob sees none of alice's
//
// The API token names the user; the auth check stores the user's id in the request context,
// and AUTH_FIELD makes everest stamp it on every note created and add it to every query.
import { TokenAuth, timingSafeEqual, type RequestContext, type Settings } from "everest-api";

/** Demo accounts: token → user id. A real deployment looks tokens up in its user store. */
const ACCOUNTS: Array<[token: string, user: string]> = [
  ["alice-token", "alice"],
  ["bob-token", "bob"],
];

class ApiTokens extends TokenAuth {
  override checkAuth(token: string, _allowedRoles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean {
    // Every account is compared, without stopping at a match, so timing reveals nothing.
    let user: string | undefined;
    for (const [candidate, id] of ACCOUNTS) if (timingSafeEqual(token, candidate)) user = id;
    if (user === undefined) return false;
    ctx.setRequestAuthValue(user);
    return true;
  }
}

export default {
  AUTH: ApiTokens,
  AUTH_FIELD: "owner",
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    notes: {
      schema: {
        title: { type: "string", required: true, maxlength: 200 },
        body: { type: "string" },
      },
    },
  },
} satisfies Settings;
