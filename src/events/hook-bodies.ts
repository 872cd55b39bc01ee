// Bodies an on_pre or on_post hook may read, as Flask's cached bodies let Eve's hooks read theirs
// (`request.get_json()` in an on_pre_POST, `payload.get_data()` in an on_post_GET), without
// taking them from everest: a web body can be read once only.
import { LIMIT_BODY } from "../http/body.ts";
import { plainResponse, responseParts, type PlainHeaders } from "../http/known-body.ts";

/**
 * The request an on_pre hook gets: a copy of one that may have a body, the body everest reads
 * left whole, its reads held to `limit` where the adapter can. Asked by method, not by `body`,
 * which would build the Request an adapter avoids.
 */
export function readableRequest(request: Request, limit: number): Request {
  const method = request.method;
  if (method === "GET" || method === "HEAD" || request.bodyUsed) return request;
  (request as { [LIMIT_BODY]?: (limit: number) => void })[LIMIT_BODY]?.(limit);
  return request.clone();
}

/**
 * A plain response (src/http/known-body.ts) after the hooks had it: as it was if they asked
 * nothing but its status, else made again of the body its parts still hold, with the headers
 * the real Response built for them has now (a hook may set some; the status cannot change).
 * Undefined for any other response, or headers a record cannot hold (several cookies).
 */
async function plainAfter(response: Response, run: (response: Response) => Promise<void>): Promise<Response | undefined> {
  const parts = responseParts(response);
  if (!parts) return undefined;
  await run(response);
  const real = parts.response;
  if (!real) return response;
  if (real.headers.getSetCookie().length > 1) return new Response(parts.body, { status: real.status, headers: real.headers });
  const headers: PlainHeaders = {};
  real.headers.forEach((value, name) => void (headers[name] = value));
  return plainResponse({ status: parts.status, headers, body: parts.body });
}

/**
 * Runs the on_post hooks on the response; if one read its body, the answer is made again from a
 * copy taken before, with the status and headers the hooks left.
 */
export async function afterPostHooks(response: Response, run: (response: Response) => Promise<void>): Promise<Response> {
  // A plain response keeps its body in its parts: no copy, and no Response built unless a hook
  // asks for more than the status (a copy cost a Node server three times the response's CPU).
  const plain = await plainAfter(response, run);
  if (plain) return plain;
  const spare = response.body !== null ? response.clone() : null;
  await run(response);
  if (!spare) return response;
  if (!response.bodyUsed) {
    void spare.body?.cancel();
    return response;
  }
  return new Response(spare.body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
