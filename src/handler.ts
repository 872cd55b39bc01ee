// createHandler: settings in, a web-standard `(Request) => Promise<Response>` out — all any
// runtime needs (`export default { fetch }`, `Deno.serve(h)`, `Bun.serve({ fetch: h })`, the Node
// adapter, or a route in Hono, itty-router or a Next.js route handler).
import { App, type HandlerOptions } from "./app.ts";
import type { Settings } from "./settings/types.ts";

export interface Handler {
  (request: Request, env?: unknown, ctx?: unknown): Promise<Response>;
  /** The application behind the handler: `app.on(event, callback)`, internal access, close(). */
  readonly app: App;
}

export function createHandler(settings: Settings, options?: HandlerOptions): Handler {
  const app = new App(settings, options);
  const handler = ((request: Request, env?: unknown, ctx?: unknown) => app.fetch(request, env, ctx)) as Handler;
  Object.defineProperty(handler, "app", { value: app, enumerable: true });
  return handler;
}
