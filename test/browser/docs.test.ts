// GET /docs in a real browser: the explorer loads with no console errors and no request leaving
// the server, lists every resource of the example, and a "try it" GET shows the server's answer.
// EVEREST_SCREENSHOT=1 also saves docs/explorer.png and docs/explorer-try-it.png, which the
// README and docs/openapi.md show.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type NodeServer } from "../../adapters/node.ts";
import { createHandler } from "../../src/handler.ts";
import type { Settings } from "../../src/settings/types.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const screenshot = async (name: string) => {
  if (process.env.EVEREST_SCREENSHOT) await page.screenshot({ path: new URL(`../../docs/${name}`, import.meta.url).pathname });
};
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

let server: NodeServer;
let profile: string;
let browser: BrowserContext;
let page: Page;
const problems: string[] = [];
const requested: string[] = [];
let resources: string[];

beforeAll(async () => {
  const settings = JSON.parse(await readFile(new URL("../../examples/settings.json", import.meta.url), "utf8")) as Settings;
  resources = Object.keys(settings.DOMAIN!);
  server = (await serve(createHandler(settings), { port: 0, host: "127.0.0.1", signals: false })) as NodeServer;
  const created = await fetch(`${server.url}/people`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ firstname: "Ada", lastname: "Lovelace" }) });
  expect(created.status).toBe(201);

  profile = await mkdtemp(join(tmpdir(), "everest-chromium-"));
  browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1280, height: 900 } });
  page = browser.pages()[0] ?? (await browser.newPage());
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("requestfailed", (request) => problems.push(`request failed: ${request.url()}`));
  page.on("request", (request) => requested.push(request.url()));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

describe("the API explorer in Chromium", () => {
  it("loads without errors, everything from everest itself, listing every resource", async () => {
    await page.goto(`${server.url}/docs`);
    await page.locator(".opblock-tag").first().waitFor();
    const tags = await page.locator(".opblock-tag").evaluateAll((elements) => elements.map((e) => e.getAttribute("data-tag")));
    expect(tags).toEqual([...resources, "API"]);
    expect(await page.locator(".info .title").innerText()).toContain("everest API");
    expect(problems).toEqual([]);
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((url) => !url.startsWith(server.url + "/") && !url.startsWith("data:"))).toEqual([]);
    await screenshot("explorer.png");
  });

  it('"try it": a GET of the people list shows the server\'s answer', async () => {
    const operation = page.locator("#operations-people-list_people");
    await operation.locator(".opblock-summary").click();
    await operation.locator("button.execute").click();
    const answer = operation.locator(".live-responses-table .response");
    await answer.first().waitFor();
    expect(await answer.locator(".response-col_status").first().innerText()).toContain("200");
    const body = await answer.locator(".response-col_description pre").first().innerText();
    expect(JSON.parse(body)._items.map((person: { lastname: string }) => person.lastname)).toEqual(["Lovelace"]);
    expect(problems).toEqual([]);
    await answer.locator(".response-col_description pre").first().evaluate((element) => element.scrollIntoView({ block: "center" }));
    await screenshot("explorer-try-it.png");
  });
});
