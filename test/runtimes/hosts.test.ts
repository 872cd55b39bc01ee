// What a server on each runtime makes of a request whose Host gives no URL, or whose path has
// dot segments. Node's adapter answers the Host cases 400 itself; Deno and Bun pass `Host: a b`
// on in request.url, and Bun hands a relative `/people` where the Host is empty or invalid: the
// handler must answer 400 in Eve's envelope, not 500, and must never store the write (its access
// log once failed after the write was done). An HTTP/1.0 request without Host is served, as
// every runtime serves it. Raw sockets, because fetch clients refuse to send such requests at all.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runtime } from "../../scripts/serve-command.ts";
import { killed, serveProcess, workspace, type Served } from "../support/processes.ts";

const runtime = (process.env.EVEREST_TEST_RUNTIME ?? "node") as Runtime;
const settings = { RESOURCE_METHODS: ["GET", "POST"], ACCESS_LOG: "text", DOMAIN: { people: { schema: { name: { type: "string" } } }, companies: { schema: { name: { type: "string" } } } } };
const { settingsFile } = workspace("hosts", settings);

/** Writes `raw` and reads the answer until the server closes the connection. */
function send(port: number, raw: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(raw));
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk) => (text += chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1]), body: text.slice(text.indexOf("\r\n\r\n") + 4) }));
  });
}

describe.skipIf(runtime === "workers")(`requests without a usable Host or with dot segments (${runtime})`, () => {
  let server: Served;
  let port: number;
  beforeAll(async () => {
    server = await serveProcess(runtime, settingsFile, "memory");
    port = Number(new URL(server.url!).port);
  });
  afterAll(() => killed(server));

  it("answers an invalid or empty Host with 400, stores nothing, and serves on", async () => {
    const post = (host: string) => `POST /people HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 15\r\nConnection: close\r\n\r\n{"name": "bad"}`;
    for (const host of ["a b", "[::1"]) {
      const answer = await send(port, post(host));
      expect(answer.status, `${host}\n${server.output()}`).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({ _status: "ERR", _error: { code: 400, message: "The request's Host header or target is not valid." } });
    }
    const page = await fetch(`${server.url}/people?where=${encodeURIComponent('{"name": "bad"}')}`);
    expect(page.status).toBe(200);
    expect(((await page.json()) as { _meta: { total: number } })._meta.total).toBe(0);
  });

  it("answers an empty Host as the runtime reads it: refused (Node) or taken as this server (Deno, Bun), never 500", async () => {
    const answer = await send(port, "GET /people HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n");
    expect(answer.status, server.output()).toBe(runtime === "node" ? 400 : 200);
  });

  it("serves an HTTP/1.0 request without Host", async () => {
    const answer = await send(port, "GET /people HTTP/1.0\r\n\r\n");
    expect(answer.status, server.output()).toBe(200);
    expect(JSON.parse(answer.body)._meta.total).toBe(0);
  });

  // Werkzeug routes `/people/../companies` as written (no route: Eve's 404); URL resolves it to
  // `/companies`. Node's adapter and Deno keep the segments; Bun resolves them before its fetch
  // handler is called (docs/deploy.md, "Paths with dot segments").
  it("reads dot segments as names, not steps up: no resource is reached through another's URL", async () => {
    const get = (path: string) => send(port, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    expect((await get("/companies")).status).toBe(200);
    for (const path of ["/people/../companies", "/people/%2e%2e/companies", "/people/.%2E/companies?max_results=1", "/people/./../companies", "/people/..", "/people/%2E"]) {
      const answer = await get(path);
      expect(answer.status, `${path}\n${server.output()}`).toBe(runtime === "bun" ? 200 : 404);
      if (runtime !== "bun") expect(JSON.parse(answer.body)._error.code).toBe(404);
    }
    expect((await get("/people/.hidden")).status).toBe(404);
  });
});
