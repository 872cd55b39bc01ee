// A handler per request, for Workers on a driver that keeps TCP connections (the native mongodb
// driver): Workers tie a socket to the request that opened it, and a later request that waits on
// it is cancelled as hung. Each request builds its handler (settings were checked at module load)
// and closes its client once the response has been sent (docs/drivers.md, "On Cloudflare Workers").
// A module of its own, loaded by adapters/workers.ts only for such a driver, so the other Workers
// bundles do not carry it.
import type { Handler } from "../src/handler.ts";

/** What a Worker's fetch receives as its third argument; only waitUntil is used. */
export interface WorkerContext {
  waitUntil(promise: Promise<unknown>): void;
}

export type WorkerFetch = (request: Request, env: Record<string, unknown>, ctx?: WorkerContext) => Promise<Response>;

/** The response whose body, once sent (or abandoned), closes the handler's database connections. */
function closingAfter(response: Response, handler: Handler, ctx: WorkerContext | undefined): Response {
  const close = () => handler.app.close();
  if (!response.body) {
    ctx?.waitUntil(close());
    return response;
  }
  // A media download streams from the database: its connection must outlive the handler's return.
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const sent = response.body.pipeTo(writable).catch(() => undefined).finally(close);
  ctx?.waitUntil(sent);
  return new Response(readable, response);
}

export function connectionPerRequest(build: (env: Record<string, unknown>) => Handler): WorkerFetch {
  return async (request, env, ctx) => {
    const handler = build(env);
    return closingAfter(await handler(request, env, ctx), handler, ctx);
  };
}
