// The Node adapter answers what node's HTTP parser refuses in the JSON error envelope (not a
// bare 400 or a reset), and takes headers large enough for a `where` with hundreds of values.
// Raw sockets, because fetch clients refuse to send such requests at all. And it writes a read
// answered from kept JSON as the kept bytes, never decoding them to text.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Server } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NodeFileAccess } from "../../adapters/node-files.ts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { serve, MAX_HEADER_SIZE, type NodeServer } from "../../adapters/node.ts";
import { createHandler } from "../../src/handler.ts";
import type { Settings } from "../../src/settings/types.ts";
import { STATUS_MESSAGES } from "../../src/errors.ts";

let server: NodeServer;
let port: number;
const handler = createHandler({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { n: { type: "integer" } } } } });

beforeAll(async () => {
  server = await serve(handler, { port: 0, signals: false });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server.close();
  await handler.app.close();
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `raw` as is and reads until the server closes (or stops answering). */
function send(raw: string): Promise<RawResponse> {
  return sendTo(port, raw);
}

function sendTo(at: number, raw: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(at, "127.0.0.1", () => socket.write(raw));
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk) => {
      text += chunk;
      const [head, body = ""] = text.split("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(head!)?.[1];
      if (length !== undefined && body.length >= Number(length)) socket.end();
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = text.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body });
    });
  });
}

function expectEnvelope(response: RawResponse, status: number): void {
  expect(response.status).toBe(status);
  expect(response.headers["content-type"]).toBe("application/json");
  // Werkzeug's description: the handler's own for 400 and 405, the adapter's for 414 and 431.
  expect(JSON.parse(response.body)).toEqual({ _status: "ERR", _error: { code: status, message: STATUS_MESSAGES[status] ?? expect.stringMatching(/^The |^One /) } });
}

describe("node adapter: answers without a body", () => {
  it("say their length is 0, as Deno's and Bun's do, rather than open an empty chunked body", async () => {
    const options = await send("OPTIONS /notes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(options.status).toBe(200);
    expect(options.headers["content-length"]).toBe("0");
    expect(options.headers).not.toHaveProperty("transfer-encoding");
    expect(options.body).toBe("");
  });
});

describe("node adapter: what the HTTP parser refuses", () => {
  it("answers an unknown method token with 405 and Allow", async () => {
    const response = await send("FOO /notes HTTP/1.1\r\nHost: x\r\n\r\n");
    expectEnvelope(response, 405);
    expect(response.headers.allow).toBe("DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT");
  });

  it("answers control bytes in a header and a malformed header name with 400", async () => {
    expectEnvelope(await send("GET /notes HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n"), 400);
    expectEnvelope(await send("GET /notes HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n"), 400);
  });

  it("answers a URL over the limit with 414 and headers over it with 431", async () => {
    expectEnvelope(await send(`GET /notes?where=${"a".repeat(MAX_HEADER_SIZE)} HTTP/1.1\r\nHost: x\r\n\r\n`), 414);
    expectEnvelope(await send(`GET /notes?where=${"a".repeat(MAX_HEADER_SIZE * 3)} HTTP/1.1\r\nHost: x\r\n\r\n`), 414);
    expectEnvelope(await send(`GET /notes HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(MAX_HEADER_SIZE)}\r\n\r\n`), 431);
    const many = Array.from({ length: 4000 }, (_, i) => `X-H${i}: ${"v".repeat(20)}`).join("\r\n");
    expectEnvelope(await send(`GET /notes HTTP/1.1\r\nHost: x\r\n${many}\r\n\r\n`), 431);
  });

  it("answers a Host header that names no origin with 400, and serves on", async () => {
    for (const host of ["a b", "[::1", "x:99999", "x:abc", "%", "@", ""]) {
      const response = await send(`GET /notes HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(response.status, host).toBe(400);
      expect(JSON.parse(response.body)).toEqual({ _status: "ERR", _error: { code: 400, message: "The request's Host header or target is not valid." } });
    }
    expect((await send("GET /notes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).status).toBe(200);
  });

  it("reads a target that starts with // as a path, not as another host's URL", async () => {
    // URL would read //x/notes as host x, path /notes, and serve what a proxy allowing only /x/… never meant to pass.
    for (const target of ["//x/notes", "//notes", "//x/notes?max_results=1"]) {
      expect((await send(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).status, target).toBe(404);
    }
  });

  it("serves a where with hundreds of values, beyond node's default 16 KiB", async () => {
    const ids = Array.from({ length: 500 }, (_, i) => i.toString(16).padStart(24, "0"));
    const where = encodeURIComponent(JSON.stringify({ _id: { $in: ids } }));
    expect(where.length).toBeGreaterThan(16 * 1024);
    const response = await send(`GET /notes?where=${where} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)._items).toEqual([]);
  });

  // The refusal was written as soon as the parser failed, and ended the connection under the
  // requests before it: the POST was stored, its 201 never sent.
  it("answers the requests pipelined before a malformed one first, then refuses it", async () => {
    const own = createHandler({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { n: { type: "integer" } } } } });
    const running = await serve(own, { port: 0, signals: false });
    const port = Number(new URL(running.url).port);
    const statuses = (raw: string) =>
      new Promise<number[]>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => socket.write(raw));
        let text = "";
        socket.setEncoding("latin1");
        socket.on("data", (chunk) => (text += chunk));
        socket.on("error", reject);
        socket.on("close", () => resolve([...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]))));
      });
    const post = 'POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{"n": 41}';
    expect(await statuses(`${post}GARBAGE\r\n\r\n`)).toEqual([201, 405]);
    expect(await statuses(`${post}GET /notes HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n`)).toEqual([201, 400]);
    const get = "GET /notes HTTP/1.1\r\nHost: x\r\n\r\n";
    expect(await statuses(`${get}${get}GARBAGE\r\n\r\n`)).toEqual([200, 200, 405]);
    // The error inside the last request's own body: that request is refused after the others' answers.
    const brokenChunks = "POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n";
    expect(await statuses(`${post}${brokenChunks}`)).toEqual([201, 400]);
    expect(await statuses(`${get}${post}${brokenChunks}`)).toEqual([200, 201, 400]);
    expect((await (await fetch(`${running.url}/notes`)).json())._meta.total).toBe(4);
    await running.close();
  });
});

describe("node adapter: a body the client abandons", () => {
  it("is the client's 400, not a server error logged: closed mid-body, or broken chunks", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      await new Promise<void>((resolve) => {
        const socket = connect(port, "127.0.0.1", () => {
          socket.write('POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"n":');
          setTimeout(() => socket.destroy(), 100);
        });
        socket.on("close", () => resolve());
      });
      const broken = await send('POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n');
      expect(broken.status).toBe(400);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(errors.mock.calls.map((call) => String(call[0]))).toEqual([]);
    } finally {
      errors.mockRestore();
    }
    const page = JSON.parse((await send("GET /notes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).body);
    expect(page._meta.total).toBe(0);
  });
});

describe("node adapter: opening", () => {
  // As `everest serve` does: listening first answered 503 to every request, readiness never came.
  it("opens the App before it listens: a journal that cannot be opened stops serve()", async () => {
    const dir = mkdtempSync(join(tmpdir(), "everest-open-"));
    try {
      writeFileSync(join(dir, "journal"), "not a journal line\n");
      const own = createHandler({ DB_URI: `file:${join(dir, "journal")}`, DOMAIN: { notes: {} } }, { services: { files: new NodeFileAccess() } });
      const listening = vi.spyOn(Server.prototype, "listen");
      await expect(serve(own, { port: 0, signals: false })).rejects.toThrow(/journal .* is damaged at line 1/);
      expect(listening).not.toHaveBeenCalled();
      listening.mockRestore();
      await own.app.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("node adapter: a start that fails", () => {
  it("closes what it opened: a journal's lock is free for the next handler when the port is taken", async () => {
    const dir = mkdtempSync(join(tmpdir(), "everest-open-"));
    const taken = await serve(async () => new Response("other"), { port: 0, signals: false });
    const settings = { DB_URI: `file:${join(dir, "journal")}`, DOMAIN: { notes: {} } };
    try {
      const first = createHandler(settings, { services: { files: new NodeFileAccess() } });
      await expect(serve(first, { port: Number(new URL(taken.url).port), signals: false })).rejects.toThrow(/EADDRINUSE/);
      const second = createHandler(settings, { services: { files: new NodeFileAccess() } });
      const running = await serve(second, { port: 0, signals: false });
      expect((await fetch(`${running.url}/notes`)).status).toBe(200);
      await running.close();
    } finally {
      await taken.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("node adapter: shutting down", () => {
  it("answers a write in flight before it closes a connection that pipelined another request after it", async () => {
    const own = createHandler({ HEALTH_ENDPOINT: "health", RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { n: { type: "integer" } } } } });
    const running = await serve(own, { port: 0, signals: false });
    const socket = connect(Number(new URL(running.url).port), "127.0.0.1");
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk) => (text += chunk));
    const closed = new Promise((resolve) => socket.on("close", resolve));
    const body = '{"n": 1}';
    socket.write(`POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 3)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stopping = running.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Readiness answers at once during shutdown, before the POST is stored, and a POST
    // pipelined behind is stored and answered too: each in order, then the connection closes.
    const second = '{"n": 2}';
    socket.write(`${body.slice(3)}GET /health/ready HTTP/1.1\r\nHost: x\r\n\r\nPOST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${second.length}\r\n\r\n${second}`);
    await closed;
    await stopping;
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d+) /g)].map((match) => Number(match[1]));
    expect(statuses).toEqual([201, 503, 201]);
    expect(text).toContain('"status":"shutting down"');
  });
});

describe("node adapter: shutting down a connection under backpressure", () => {
  // A client that stops reading makes node:http stop parsing the requests it pipelined; at
  // shutdown the connection ended as soon as the requests parsed so far were answered, and those
  // still unread were then carried out (a POST stored) with their answers lost.
  it("answers every request pipelined before the drain, the ones node had not parsed yet included", async () => {
    const big = "x".repeat(30_000);
    const own = async (request: Request) => (request.method === "POST" ? new Response(await request.text(), { status: 201 }) : new Response(big));
    const running = await serve(own, { port: 0, signals: false });
    const socket = connect(Number(new URL(running.url).port), "127.0.0.1");
    let text = "";
    socket.setEncoding("latin1");
    socket.pause();
    const closed = new Promise((resolve) => socket.on("close", resolve));
    const gets = (from: number) => Array.from({ length: 80 }, (_, i) => `GET /p?i=${from + i} HTTP/1.1\r\nHost: x\r\n\r\n`).join("");
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    socket.write(gets(0));
    await pause(200);
    socket.write(gets(80));
    await pause(200);
    socket.write(`${gets(160)}POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\nlost-ack`);
    await pause(200);
    const stopping = running.close();
    await pause(200);
    socket.on("data", (chunk) => (text += chunk));
    socket.resume();
    await closed;
    await stopping;
    expect(text.match(/HTTP\/1\.1 \d+ /g)).toHaveLength(241);
    expect(text.match(/HTTP\/1\.1 \d+ /g)!.at(-1)).toBe("HTTP/1.1 201 ");
    expect(text.slice(-200)).toContain("lost-ack");
  });
});

describe("node adapter: bodies over MAX_BODY_SIZE", () => {
  const settings: Settings = { MAX_BODY_SIZE: 1000, HEALTH_ENDPOINT: "health", RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { text: { type: "string" } } } } };
  /** Everything the server writes back on one connection until it goes quiet for `ms`. */
  const exchange = (port: number, write: (socket: ReturnType<typeof connect>) => void, ms = 1500) =>
    new Promise<string>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => write(socket));
      let text = "";
      let timer = setTimeout(() => (socket.destroy(), resolve(text)), ms);
      socket.setEncoding("latin1");
      socket.on("data", (chunk) => {
        text += chunk;
        clearTimeout(timer);
        timer = setTimeout(() => (socket.destroy(), resolve(text)), 300);
      });
      socket.on("error", () => undefined);
    });

  it("answers 413 to a large chunked body and then the request pipelined behind it", async () => {
    const running = await serve(createHandler(settings), { port: 0, signals: false });
    const chunk = `4000\r\n${"x".repeat(0x4000)}\r\n`;
    const text = await exchange(Number(new URL(running.url).port), (socket) => {
      socket.write("POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      for (let i = 0; i < 200; i++) socket.write(chunk);
      socket.write("0\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    });
    await running.close();
    // It hung, the GET unanswered, until the connection was reset.
    expect([...text.matchAll(/HTTP\/1\.1 (\d+) /g)].map((match) => Number(match[1]))).toEqual([413, 200]);
  });

  it("holds an on_pre hook's read of the body to the limit: 413, without the hook getting the whole body", async () => {
    const handler = createHandler(settings);
    const read: Array<number | string> = [];
    handler.app.on("on_pre_POST", async (_resource: string, request: Request) => {
      try {
        read.push((await request.text()).length);
      } catch (error) {
        read.push((error as Error).name);
        throw error;
      }
    });
    const running = await serve(handler, { port: 0, signals: false });
    const body = JSON.stringify({ text: "x".repeat(200_000) });
    const answer = await fetch(`${running.url}/notes`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
    expect(answer.status).toBe(413);
    expect(await answer.json()).toMatchObject({ _status: "ERR", _error: { code: 413 } });
    expect(read).toEqual(["BodyError"]);
    expect((await (await fetch(`${running.url}/notes`)).json())._meta.total).toBe(0);
    await running.close();
  });

  it("gives an on_pre hook reading a body the client abandons the client's error, logged as no fault", async () => {
    const handler = createHandler(settings);
    const read: string[] = [];
    handler.app.on("on_pre_POST", async (_resource: string, request: Request) => {
      try {
        await request.text();
        read.push("read");
      } catch (error) {
        read.push(`${(error as Error).name} ${(error as { status?: number }).status}`);
        throw error;
      }
    });
    const running = await serve(handler, { port: 0, signals: false });
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      await new Promise<void>((resolve) => {
        const socket = connect(Number(new URL(running.url).port), "127.0.0.1", () => {
          socket.write('POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"n":');
          setTimeout(() => socket.destroy(), 100);
        });
        socket.on("close", () => resolve());
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(read).toEqual(["BodyError 400"]);
      expect(errors.mock.calls.map((call) => String(call[0]))).toEqual([]);
    } finally {
      errors.mockRestore();
    }
    expect((await (await fetch(`${running.url}/notes`)).json())._meta.total).toBe(0);
    await running.close();
  });
});

describe("node adapter: request headers", () => {
  // What the handler reads through the adapter's lazy headers must be what undici's Headers
  // holds for the same header lines: absent names, repeated lines, names node keeps once, case.
  const RAW_LINES = [
    ["X-Repeated", "a"],
    ["x-repeated", "b"],
    ["User-Agent", "first"],
    ["User-Agent", "second"],
    ["Accept", " text/plain "],
    ["Cookie", "a=1"],
    ["Cookie", "b=2"],
  ];
  const NAMES = ["x-repeated", "X-REPEATED", "user-agent", "accept", "cookie", "if-none-match", "origin", "cf-connecting-ip", "host"];

  it("answers get() and has() as Headers would for the same header lines", async () => {
    const echo = await serve(
      async (request) => {
        const seen = Object.fromEntries(NAMES.map((name) => [name, [request.headers.get(name), request.headers.has(name)]]));
        return Response.json(seen);
      },
      { port: 0, signals: false },
    );
    try {
      const echoPort = new URL(echo.url).port;
      const lines = RAW_LINES.map(([name, value]) => `${name}: ${value}`).join("\r\n");
      const text = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(echoPort), "127.0.0.1", () => socket.write(`GET / HTTP/1.1\r\nHost: h.test\r\n${lines}\r\nConnection: close\r\n\r\n`));
        let all = "";
        socket.setEncoding("utf8");
        socket.on("data", (chunk) => (all += chunk));
        socket.on("error", reject);
        socket.on("close", () => resolve(all));
      });
      const expected = new Headers([["Host", "h.test"], ...RAW_LINES.map(([n, v]) => [n!, v!] as [string, string]), ["Connection", "close"]]);
      const want = Object.fromEntries(NAMES.map((name) => [name, [expected.get(name), expected.has(name)]]));
      expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4).replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, ""))).toEqual(want);
    } finally {
      await echo.close();
    }
  });
});

describe("node adapter: reads answered from kept JSON", () => {
  // src/render/kept-json.ts keeps a version's JSON as bytes, and as text only for runtimes whose
  // Response copies bytes (Deno): this adapter takes the plain parts and must never ask for it.
  it("writes a kept item and page as their bytes without decoding them, where a Response made in process is made of text", async () => {
    const body = JSON.stringify({ n: 7 });
    const created = await send(`POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    expect(created.status).toBe(201);
    const id = (JSON.parse(created.body) as { _id: string })._id;
    const decode = vi.spyOn(TextDecoder.prototype, "decode");
    try {
      const read = (path: string) => send(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      // The first read of each keeps the JSON; the second is answered from it.
      const answers = [await read(`/notes/${id}`), await read("/notes"), await read(`/notes/${id}`), await read("/notes")];
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      expect(JSON.parse(answers[2]!.body)).toMatchObject({ _id: id, n: 7 });
      expect(JSON.parse(answers[3]!.body)._items).toHaveLength(1);
      expect(decode).not.toHaveBeenCalled();
      // The same kept reads through a standard Response: made of the text, decoded from those bytes.
      const item = await handler(new Request(`http://x/notes/${id}`));
      const page = await handler(new Request("http://x/notes"));
      expect(decode).toHaveBeenCalledTimes(2);
      expect(await item.text()).toBe(answers[2]!.body);
      expect(await page.text()).toBe(answers[3]!.body);
    } finally {
      decode.mockRestore();
    }
  });
});

describe("node adapter: requests and answers hooks had", () => {
  // src/events/hook-bodies.ts: a hook that reads the answer gets it whole, and the client still
  // gets it whole, with the headers the hook set, written from the parts as any plain answer is.
  it("are written with their length, with the headers a hook set, whether or not it read the body", async () => {
    const hooked = createHandler({ MAX_BODY_SIZE: 100, RESOURCE_METHODS: ["GET", "POST"], ITEM_METHODS: ["GET"], DOMAIN: { notes: { schema: { n: { type: "integer" } } } } });
    const read: unknown[] = [];
    hooked.app.hooks.on("on_post_GET_notes", async (_request: Request, payload: Response) => {
      if (payload.status !== 200) return;
      if (new URL(_request.url).pathname === "/notes") return;
      read.push((await payload.json()).n);
      payload.headers.set("X-Seen", "yes");
    });
    hooked.app.hooks.on("on_post_POST_notes", (_request: Request, payload: Response) => void read.push(payload.status));
    // An on_pre hook's GET has no body to keep a copy of, and asking builds no Request for it;
    // a POST's copy reads the bytes read once for both, and the document is stored all the same.
    hooked.app.hooks.on("on_pre_GET_notes", (request: Request) => void read.push(request.body));
    hooked.app.hooks.on("on_pre_POST_notes", async (request: Request) => void read.push(await request.json()));
    const own = await serve(hooked, { port: 0, signals: false });
    // The parts keep the body: a hook that asks only the status has no Response made, and one
    // that reads the body has the one it reads, never a copy (a copy and the stream written from
    // it cost the Node server three times the CPU of the answer; bench/README.md, fifth session).
    const made: string[] = [];
    let current = "";
    const Original = globalThis.Response;
    globalThis.Response = class extends Original {
      constructor(...args: ConstructorParameters<typeof Response>) {
        super(...args);
        made.push(current);
      }
    };
    const OriginalRequest = globalThis.Request;
    globalThis.Request = class extends OriginalRequest {
      constructor(...args: ConstructorParameters<typeof Request>) {
        super(...args);
        made.push(`request ${current}`);
      }
    };
    try {
      const at = Number(new URL(own.url).port);
      const body = JSON.stringify({ n: 7 });
      const exchange = (raw: string) => sendTo(at, raw);
      const created = await exchange(`POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      expect(created.status).toBe(201);
      expect(created.headers["content-length"]).toBe(String(created.body.length));
      const id = (JSON.parse(created.body) as { _id: string })._id;
      for (const path of [`/notes/${id}`, "/notes"]) {
        current = path;
        const answer = await exchange(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        expect(answer.status).toBe(200);
        expect(answer.headers).not.toHaveProperty("transfer-encoding");
        expect(answer.headers["content-length"]).toBe(String(Buffer.byteLength(answer.body)));
        expect(answer.headers["x-seen"]).toBe(path === "/notes" ? undefined : "yes");
        expect(JSON.parse(answer.body)).toMatchObject(path === "/notes" ? { _items: [{ n: 7 }] } : { _id: id, n: 7 });
      }
      expect(read).toEqual([{ n: 7 }, 201, null, 7, null]);
      // A body over the limit is refused, the hook's copy held to the limit too (it read the body
      // whole before): its read fails, 413, nothing stored.
      read.length = 0;
      const big = JSON.stringify({ n: 8, pad: "x".repeat(200) });
      const refused = await exchange(`POST /notes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`);
      expect(refused.status).toBe(413);
      expect(JSON.parse(refused.body)._status).toBe("ERR");
      expect(read).toEqual([]);
      expect((await exchange(`GET /notes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).body).not.toContain('"n": 8');
      expect(made).toEqual([`/notes/${id}`]);
    } finally {
      globalThis.Response = Original;
      globalThis.Request = OriginalRequest;
      await own.close();
      await hooked.app.close();
    }
  });
});
