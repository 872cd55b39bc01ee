// X-HTTP-Method-Override (ALLOW_OVERRIDE_HTTP_METHOD): only a POST may be overridden, so a safe
// request can never change data (src/app.ts asks only for a POST: a header read is a call out
// of JavaScript on Deno). A method the endpoint does not answer (FOO included) is then a 405,
// as in Eve, never a create.
import { HttpError } from "../errors.ts";

/**
 * The method a POST is to be served as. Not HEAD: its answer would carry a Content-Length and no
 * body on a connection that sent a POST, and a client or proxy reusing the connection would read
 * the next response as this one's body.
 */
export function overriddenMethod(request: Request): string {
  const method = request.headers.get("x-http-method-override")?.trim().toUpperCase();
  if (!method) return "POST";
  if (method === "HEAD") throw new HttpError(400, "X-HTTP-Method-Override cannot be HEAD: send a HEAD request");
  return method;
}
