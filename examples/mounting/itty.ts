// everest in an itty-router app, at /api beside the app's own routes. The route passes the
// request and whatever the runtime added (env, ctx on Workers) straight to everest.
import { AutoRouter, type IRequest } from "itty-router";
import { createHandler } from "everest-api";
import { settings } from "./settings.ts";

const everest = createHandler(settings);

export const router = AutoRouter();
router.get("/health", () => new Response("ok"));
router.all("/api/*", (request: IRequest, env: unknown, ctx: unknown) => everest(request, env, ctx));

export default router;
