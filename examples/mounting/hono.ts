// everest in a Hono app, at /api beside the app's own routes. hono/mount's mount() passes the
// request on unchanged (replaceRequest: false) with env and, on Workers, the execution context.
import { Hono } from "hono";
import { mount } from "hono/mount";
import { createHandler } from "everest-api";
import { settings } from "./settings.ts";

const everest = createHandler(settings);

export const app = new Hono();
app.get("/health", (c) => c.text("ok"));
app.all("/api/*", mount(everest, { replaceRequest: false }));

// A module worker, a Bun or Deno server: `export default app` is all they need.
export default app;
