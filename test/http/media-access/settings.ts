// Settings of test/http/media-access.test.ts, in a module of their own: they hold an auth class,
// which a server on another runtime loads from here.
import { TokenAuth } from "../../../src/auth/auth.ts";
import type { RequestContext } from "../../../src/context.ts";
import type { Settings } from "../../../src/settings/types.ts";

/** The token is the user's name, and the request's auth value; admin alone holds the role. */
class Users extends TokenAuth {
  override checkAuth(token: string, roles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean {
    if (!["alice", "bob", "admin"].includes(token)) return false;
    ctx.setRequestAuthValue(token);
    ctx.setRequestRoles(token === "admin" ? ["admin"] : []);
    return roles.length === 0 || token === "admin";
  }
}

const settings: Settings = {
  AUTH: Users,
  RETURN_MEDIA_AS_BASE64_STRING: false,
  RETURN_MEDIA_AS_URL: true,
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: {
    // Each user's own documents.
    notes: { auth_field: "owner", schema: { title: { type: "string" }, file: { type: "media" } } },
    // Each user's own, with versions holding the files replaced.
    drafts: { auth_field: "owner", versioning: true, item_methods: ["GET", "PATCH"], schema: { title: { type: "string" }, file: { type: "media" } } },
    // Readable by admin alone, collection and items.
    vault: { allowed_roles: ["admin"], allowed_item_roles: ["admin"], schema: { file: { type: "media" } } },
    // Anyone's who authenticates.
    shared: { schema: { file: { type: "media" } } },
  },
};

export default settings;
