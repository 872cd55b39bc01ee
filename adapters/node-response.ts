// A web Response written to node:http's ServerResponse (adapters/node.ts): plain parts
// (src/http/known-body.ts) with one writeHead and one end(), a known body likewise, and any other
// body streamed as it comes.
import type { ServerResponse } from "node:http";
import { knownBody, responseParts } from "../src/http/known-body.ts";

function headersFor(response: Response): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    headers[key] = key === "set-cookie" ? response.headers.getSetCookie() : value;
  });
  return headers;
}

/**
 * Not async: a response whose body is known (nearly all) is written at once and nothing is
 * returned, so the request's frame does not await a promise and a turn of the microtask queue
 * for it; only a streamed body returns the promise of its end.
 */
export function writeResponse(response: Response, res: ServerResponse): Promise<void> | undefined {
  const parts = responseParts(response);
  if (parts) {
    res.writeHead(parts.status, parts.headers);
    return void res.end(parts.body ?? undefined);
  }
  const bytes = knownBody(response);
  const headers = headersFor(response);
  // No body: say so, as Deno's and Bun's servers do, rather than open a chunked one that stays empty.
  if (!bytes && !response.body && response.status !== 204 && response.status !== 304 && res.req?.method !== "HEAD") headers["content-length"] ??= "0";
  res.writeHead(response.status, headers);
  if (bytes) return void res.end(bytes);
  if (!response.body) return void res.end();
  return writeStream(response.body, res);
}

async function writeStream(body: ReadableStream<Uint8Array>, res: ServerResponse): Promise<void> {
  // Written as it comes (an event stream never ends by itself), waiting for the socket when it is
  // full; a client that goes away cancels the body, which frees what the handler holds for it.
  const reader = body.getReader();
  const gone = () => void reader.cancel().catch(() => undefined);
  res.once("close", gone);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => {
        const resume = () => {
          res.off("drain", resume);
          res.off("close", resume);
          resolve();
        };
        res.once("drain", resume);
        res.once("close", resume);
      });
      if (res.destroyed) break;
    }
  } finally {
    res.off("close", gone);
  }
  if (!res.destroyed) res.end();
}
