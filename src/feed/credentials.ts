// How a browser's EventSource, which cannot set headers, authenticates (docs/auth.md): its
// credential rides in a query parameter (CHANGE_FEED_AUTH_PARAM, `access_token` by default) of a
// stream request, and is moved into the Authorization header before anything else sees the
// request — the auth classes read it from there as from any client, and the access log, links
// and hooks see a URL without it. Cookies need nothing of this: EventSource sends them.
import { wantsEventStream } from "./sse.ts";

/**
 * The request as the rest of the App sees it: for a GET asking for an event stream that carries
 * the parameter, the parameter removed from its URL and, unless the request has an
 * Authorization header already, turned into one (`Bearer <value>`, or the value as it is when it
 * names its scheme, as in `Basic dXNlcjpwYXNz`). Any other request is returned as it is.
 */
export function streamCredentials(request: Request, param: string): Request {
  if (request.method !== "GET" || !request.url.includes(`${param}=`) || !wantsEventStream(request.headers.get("accept"))) return request;
  const url = new URL(request.url);
  const value = url.searchParams.get(param);
  if (value === null) return request;
  url.searchParams.delete(param);
  const headers = new Headers(request.headers);
  if (!headers.has("authorization") && value !== "") headers.set("Authorization", /^\S+ \S/.test(value) ? value : `Bearer ${value}`);
  return new Request(url, { method: "GET", headers, signal: request.signal });
}
