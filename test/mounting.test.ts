// The mounting examples: everest under /api inside Hono, itty-router and a Next.js route
// handler. Inside the prefix everest answers with URLs that carry it (Location, links), so a
// client follows them back to the same document; outside it the framework's own routes answer.
import { describe, expect, it } from "vitest";
import { app } from "../examples/mounting/hono.ts";
import { router } from "../examples/mounting/itty.ts";
import * as route from "../examples/mounting/next-route.ts";

const ORIGIN = "https://example.test";

type Fetch = (request: Request) => Promise<Response>;

const nextRoute: Fetch = (request) => {
  const handle = (route as Record<string, Fetch | undefined>)[request.method];
  if (!handle) throw new Error(`the route exports no ${request.method}`);
  return handle(request);
};

const MOUNTS: Array<{ name: string; fetch: Fetch; ownRoutes: boolean }> = [
  { name: "Hono", fetch: (request) => Promise.resolve(app.fetch(request)), ownRoutes: true },
  { name: "itty-router", fetch: (request) => router.fetch(request), ownRoutes: true },
  // A route file only ever sees the requests Next.js routes to it: all of them are under /api.
  { name: "a Next.js route handler", fetch: nextRoute, ownRoutes: false },
];

describe.each(MOUNTS)("everest at /api in $name", ({ fetch, ownRoutes }) => {
  const send = (path: string, init?: RequestInit) => fetch(new Request(ORIGIN + path, init));

  it("serves the API home at the prefix", async () => {
    const response = await send("/api");
    expect(response.status).toBe(200);
    expect((await response.json())._links.child.map((link: { href: string }) => link.href)).toContain("people");
  });

  it("answers a POST with a Location under the prefix that leads back to the document", async () => {
    const created = await send("/api/people", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ lastname: "Mounted" }) });
    expect(created.status).toBe(201);
    const { _id } = await created.json();
    const location = created.headers.get("location")!;
    expect(location).toBe(`${ORIGIN}/api/people/${_id}`);
    const fetched = await fetch(new Request(location));
    expect(fetched.status).toBe(200);
    expect(await fetched.json()).toMatchObject({ _id, lastname: "Mounted" });
  });

  it("answers CORS preflight and HEAD itself", async () => {
    expect((await send("/api/people", { method: "HEAD" })).status).toBe(200);
    const preflight = await send("/api/people", { method: "OPTIONS" });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get("allow")).toContain("POST");
  });

  it.runIf(ownRoutes)("leaves the paths outside the prefix to the framework", async () => {
    expect(await (await send("/health")).text()).toBe("ok");
    expect((await send("/people")).status).toBe(404);
  });
});
