// Two users, alice and bob, who authenticate with a bearer token each: the auth class the
// user-restricted (auth_field) tests share, which records who is calling as the auth value.
import { TokenAuth } from "../../src/auth/auth.ts";
import type { RequestContext } from "../../src/context.ts";

/** Tokens name users; the check records who is calling, for auth_field. */
export class TokenUsers extends TokenAuth {
  override checkAuth(token: string, _roles: string[], _resource: string | null, _method: string, ctx: RequestContext): boolean {
    const user = ({ "alice-token": "alice", "bob-token": "bob" } as Record<string, string>)[token];
    if (!user) return false;
    ctx.setRequestAuthValue(user);
    return true;
  }
}

export const ALICE = { Authorization: "Bearer alice-token" };
export const BOB = { Authorization: "Bearer bob-token" };
