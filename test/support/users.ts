// Two users for the tests of user-restricted access (auth_field): tokens name them, and the
// check records who is calling, as an auth class of an Eve app sets the request's auth value.
import { TokenAuth } from "../../src/auth/auth.ts";
import type { RequestContext } from "../../src/context.ts";

export class Users extends TokenAuth {
  override checkAuth(token: string, _roles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean {
    const user = ({ "alice-token": "alice", "bob-token": "bob" } as Record<string, string>)[token];
    if (!user) return false;
    ctx.setRequestAuthValue(user);
    return true;
  }
}

export const alice = { Authorization: "Bearer alice-token" };
export const bob = { Authorization: "Bearer bob-token" };
