// The change feed in a real browser (docs/feed.md): a page keeps a live list with the native
// EventSource — the page of documents first, then insert/update/replace/enter to put a
// document, delete/leave to drop it — and after 200 writes and a forced reconnect (every
// connection cut mid-way, so the browser reconnects by itself with Last-Event-ID) the list
// equals a GET of the collection.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { serve, type NodeServer } from "../../adapters/node.ts";
import { createHandler } from "../../src/handler.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

const PAGE = `<!doctype html>
<meta charset="utf-8">
<ul id="people"></ul>
<script type="module">
  const rows = new Map();
  window.opened = 0;
  window.rows = () => Object.fromEntries([...rows].map(([id, doc]) => [id, doc._etag]));
  const list = document.getElementById("people");
  const show = () => list.replaceChildren(...[...rows.values()].map((p) => Object.assign(document.createElement("li"), { textContent: p.name })));
  for (const person of (await (await fetch("/people")).json())._items) rows.set(person._id, person);
  show();
  const feed = new EventSource("/people");
  feed.addEventListener("open", () => window.opened++);
  for (const kind of ["insert", "update", "replace", "enter"]) {
    feed.addEventListener(kind, (event) => { const doc = JSON.parse(event.data); rows.set(doc._id, doc); show(); });
  }
  for (const kind of ["delete", "leave"]) {
    feed.addEventListener(kind, (event) => { rows.delete(JSON.parse(event.data)._id); show(); });
  }
  window.ready = true;
</script>`;

let server: NodeServer;
let profile: string;
let browser: BrowserContext;
let page: Page;
const problems: string[] = [];
/** Last-Event-ID of each stream request the server got (null: none). */
const resumedFrom: Array<string | null> = [];

beforeAll(async () => {
  const handler = createHandler({
    CHANGE_FEED: true,
    CHANGE_FEED_RETRY: 200,
    PAGINATION_LIMIT: 1000,
    PAGINATION_DEFAULT: 1000,
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    DOMAIN: { people: { schema: { name: { type: "string" }, n: { type: "integer" } } } },
  });
  server = (await serve(
    (request, env) => {
      if (new URL(request.url).pathname === "/live.html") return Promise.resolve(new Response(PAGE, { headers: { "Content-Type": "text/html; charset=utf-8" } }));
      if (request.headers.get("accept") === "text/event-stream") resumedFrom.push(request.headers.get("last-event-id"));
      return handler(request, env);
    },
    { port: 0, host: "127.0.0.1", signals: false },
  )) as NodeServer;
  profile = await mkdtemp(join(tmpdir(), "everest-chromium-"));
  browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS });
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

async function send(method: string, path: string, body?: unknown, etag?: string): Promise<any> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { "Content-Type": "application/json", ...(etag ? { "If-Match": etag } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status, `${method} ${path}`).toBeLessThan(300);
  return response.status === 204 ? null : response.json();
}

/** id → ETag of the whole collection, as a GET answers it. */
async function collection(): Promise<Record<string, string>> {
  const { _items } = (await send("GET", "/people")) as { _items: Array<{ _id: string; _etag: string }> };
  return Object.fromEntries(_items.map((doc) => [doc._id, doc._etag]));
}

it("a live list stays equal to a GET of the collection after 200 writes and a forced reconnect", async () => {
  for (let i = 0; i < 10; i++) await send("POST", "/people", { name: `before ${i}`, n: i });
  await page.goto(`${server.url}/live.html`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean; opened: number }).ready && (window as unknown as { opened: number }).opened === 1);

  const live: Array<{ _id: string; _etag: string }> = [];
  for (let write = 0; write < 200; write++) {
    if (write === 100) {
      // Every connection cut: the EventSource reconnects by itself, with Last-Event-ID.
      server.server.closeAllConnections();
      // This test's own pooled connection is cut too: a moment for the client to see it closed.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const kind = write % 5;
    if (kind < 2 || live.length < 3) live.push(await send("POST", "/people", { name: `person ${write}`, n: write }));
    else if (kind === 2) {
      const target = live[write % live.length]!;
      Object.assign(target, await send("PATCH", `/people/${target._id}`, { n: -write }, target._etag));
    } else if (kind === 3) {
      const target = live[(write * 7) % live.length]!;
      Object.assign(target, await send("PUT", `/people/${target._id}`, { name: `replaced ${write}` }, target._etag));
    } else {
      const [target] = live.splice(write % live.length, 1);
      await send("DELETE", `/people/${target!._id}`, undefined, target!._etag);
    }
  }

  const expected = await collection();
  await page.waitForFunction((want) => JSON.stringify((window as unknown as { rows(): Record<string, string> }).rows()) === want, JSON.stringify(sorted(expected)), { timeout: 30_000 }).catch(() => undefined);
  const shown = await page.evaluate(() => (window as unknown as { rows(): Record<string, string> }).rows());
  expect(sorted(shown)).toEqual(sorted(expected));
  expect(Object.keys(expected).length).toBeGreaterThan(50);
  expect(await page.evaluate(() => (window as unknown as { opened: number }).opened)).toBeGreaterThanOrEqual(2);
  // The first stream started fresh; the browser resumed the next one from the last event it had.
  expect(resumedFrom[0]).toBeNull();
  expect(resumedFrom.slice(1).every((id) => typeof id === "string" && id.length > 0)).toBe(true);
  expect(resumedFrom.length).toBeGreaterThanOrEqual(2);
  expect(problems).toEqual([]);
});

function sorted(rows: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(rows).sort(([a], [b]) => a.localeCompare(b)));
}
