import { afterAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import { peopleSettings } from "../support/settings.ts";

describe("renderers", () => {
  const api = testApi(peopleSettings({ JSONP_ARGUMENT: "callback" }));
  afterAll(() => api.close());

  it("renders XML when asked for it", async () => {
    const response = await api.get("/", { Accept: "application/xml" });
    expect(response.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(await response.text()).toBe(
      '<resource><link rel="child" href="people" title="people" /><link rel="child" href="works" title="works" /></resource>',
    );
  });

  it("adds a charset to the XML types Werkzeug gives one, not to application/x-xml", async () => {
    for (const [accept, type] of [["text/xml", "text/xml; charset=utf-8"], ["application/x-xml", "application/x-xml"]]) {
      const response = await api.get("/", { Accept: accept! });
      expect(response.headers.get("content-type")).toBe(type);
      expect(await response.text()).toContain("<resource>");
    }
  });

  it("counts Content-Length in bytes: JSON escapes non-ASCII, XML carries it as UTF-8", async () => {
    expect((await api.post("/people", { firstname: "Zoë", lastname: "Ångström" })).status).toBe(201);
    for (const accept of ["application/json", "application/xml"]) {
      const response = await api.get("/people", { Accept: accept });
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(Number(response.headers.get("content-length"))).toBe(bytes.byteLength);
      expect(new TextDecoder().decode(bytes)).toContain(accept === "application/json" ? "Zo\\u00eb" : "Zoë");
    }
  });

  it("renders errors as XML too", async () => {
    const response = await api.get("/nothing", { Accept: "application/xml" });
    expect(response.status).toBe(404);
    expect(await response.text()).toContain("<_status>ERR</_status>");
  });

  it("prefers the better quality and, like Eve, falls back to the first renderer when nothing is acceptable", async () => {
    expect((await api.get("/", { Accept: "application/xml;q=0.5, application/json" })).headers.get("content-type")).toBe("application/json");
    expect((await api.get("/", { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" })).headers.get("content-type")).toContain("xml");
    const fallback = await api.get("/", { Accept: "text/csv" });
    expect(fallback.status).toBe(200);
    expect(fallback.headers.get("content-type")).toBe("application/json");
  });

  it("honours RENDERERS", async () => {
    const jsonOnly = testApi(peopleSettings({ RENDERERS: ["eve.render.JSONRenderer"] }));
    expect((await jsonOnly.get("/", { Accept: "application/xml" })).headers.get("content-type")).toBe("application/json");
    expect((await jsonOnly.get("/", { Accept: "*/*" })).headers.get("content-type")).toBe("application/json");
    await jsonOnly.close();
    const xmlOnly = testApi(peopleSettings({ RENDERERS: ["xml"] }));
    expect((await xmlOnly.get("/", { Accept: "application/json" })).headers.get("content-type")).toBe("application/xml; charset=utf-8");
    await xmlOnly.close();
  });

  it("wraps JSONP and refuses a callback that is not an identifier", async () => {
    const response = await api.get("/?callback=handle");
    expect(await response.text()).toMatch(/^handle\(\{.*\}\)$/s);
    const bad = await api.get(`/?callback=${encodeURIComponent("alert(1)//")}`);
    expect(bad.status).toBe(400);
  });

  it("pretty-prints with four spaces", async () => {
    const text = await (await api.get("/?pretty")).text();
    expect(text).toBe('{\n    "_links": {\n        "child": [\n            {\n                "href": "people",\n                "title": "people"\n            },\n            {\n                "href": "works",\n                "title": "works"\n            }\n        ]\n    }\n}');
  });

  it("leaves a write's answer compact under ?pretty, as Eve indents GET answers only", async () => {
    const created = await api.post("/people?pretty", { lastname: "Pretty" });
    expect(created.status).toBe(201);
    const text = await created.text();
    expect(text).not.toContain("\n");
    expect(text).toMatch(/^\{"_updated": /);
    const item = await api.get("/people/Pretty?pretty");
    expect(await item.text()).toMatch(/^\{\n    "/);
  });

  it("writes JSON as Python's json.dumps does", async () => {
    expect(await (await api.get("/")).text()).toBe('{"_links": {"child": [{"href": "people", "title": "people"}, {"href": "works", "title": "works"}]}}');
  });
});

describe("CORS", () => {
  const api = testApi(peopleSettings({ X_DOMAINS: ["https://good.example"], X_DOMAINS_RE: ["^https://.*\\.trusted\\.example$"], X_HEADERS: ["Content-Type", "If-Match"], X_EXPOSE_HEADERS: ["ETag"], X_ALLOW_CREDENTIALS: true }));
  afterAll(() => api.close());

  it("echoes an allowed origin with the CORS headers", async () => {
    const response = await api.get("/people", { Origin: "https://good.example" });
    expect(response.headers.get("access-control-allow-origin")).toBe("https://good.example");
    expect(response.headers.get("access-control-allow-headers")).toBe("Content-Type, If-Match");
    expect(response.headers.get("access-control-expose-headers")).toBe("ETag");
    expect(response.headers.get("access-control-allow-credentials")).toBe("true");
    expect(response.headers.get("access-control-max-age")).toBe("21600");
    expect((await api.get("/people", { Origin: "https://a.trusted.example" })).headers.get("access-control-allow-origin")).toBe("https://a.trusted.example");
  });

  it("never echoes a disallowed origin", async () => {
    const response = await api.get("/people", { Origin: "https://evil.example" });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect((await api.get("/people", { Origin: "https://trusted.example.evil" })).headers.get("access-control-allow-origin")).toBeNull();
  });

  it("says Vary: Origin on every answer, with or without an Origin, allowed or not", async () => {
    for (const headers of [{}, { Origin: "https://evil.example" }, { Origin: "https://good.example" }] as Array<Record<string, string>>) {
      expect((await api.get("/people", headers)).headers.get("vary")).toBe("Origin");
    }
    const open = testApi(peopleSettings({ X_DOMAINS: "*" }));
    expect((await open.get("/people")).headers.get("vary")).toBe("Origin");
    await open.close();
    const off = testApi(peopleSettings({}));
    expect((await off.get("/people", { Origin: "https://good.example" })).headers.get("vary")).toBeNull();
    await off.close();
  });

  it("answers a preflight with the allowed methods", async () => {
    const response = await api.fetch("/people", { method: "OPTIONS", headers: { Origin: "https://good.example", "Access-Control-Request-Method": "POST" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-methods")).toBe("DELETE, GET, HEAD, OPTIONS, POST");
    expect(response.headers.get("access-control-allow-origin")).toBe("https://good.example");
  });

  it("anchors every X_DOMAINS_RE alternative at the start, as Python's re.match does", async () => {
    const alternatives = testApi(peopleSettings({ X_DOMAINS_RE: ["^http://a\\.example$|http://b\\.example$"] }));
    const allowed = async (origin: string) => (await alternatives.get("/people", { Origin: origin })).headers.get("access-control-allow-origin");
    expect(await allowed("http://a.example")).toBe("http://a.example");
    expect(await allowed("http://b.example")).toBe("http://b.example");
    expect(await allowed("xhttp://b.example")).toBeNull();
    expect(await allowed("http://evil.example/http://b.example")).toBeNull();
    await alternatives.close();
  });

  it("allows any origin with '*'", async () => {
    const open = testApi(peopleSettings({ X_DOMAINS: "*" }));
    expect((await open.get("/", { Origin: "https://x.example" })).headers.get("access-control-allow-origin")).toBe("https://x.example");
    await open.close();
  });
});

describe("bad input", () => {
  const api = testApi(peopleSettings({ MAX_BODY_SIZE: 1024 }));
  afterAll(() => api.close());

  it("answers malformed JSON with 400", async () => {
    const response = await api.post("/people", '{"lastname":');
    expect(response.status).toBe(400);
    expect((await json(response))._error.code).toBe(400);
  });

  it("answers an unknown or missing content type with Eve's 400 (eve/methods/common.py payload())", async () => {
    for (const headers of [{ "Content-Type": "text/plain" }, {}] as Array<Record<string, string>>) {
      const response = await api.fetch("/people", { method: "POST", headers, body: "lastname=x" });
      expect(response.status).toBe(400);
      expect(await json(response)).toEqual({ _status: "ERR", _error: { code: 400, message: "Unknown or no Content-Type header supplied" } });
    }
  });

  it("refuses a body over MAX_BODY_SIZE with 413, streamed or declared", async () => {
    const big = JSON.stringify({ lastname: "x".repeat(5000) });
    expect((await api.post("/people", big)).status).toBe(413);
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode(" ".repeat(500)));
        controller.close();
      },
    });
    const response = await api.fetch("/people", { method: "POST", headers: { "Content-Type": "application/json" }, body: stream, duplex: "half" } as RequestInit);
    expect(response.status).toBe(413);
    // A length declared under the limit does not let more through (in-process, where nothing frames the body by it).
    const understated = await api.fetch("/people", { method: "POST", headers: { "Content-Type": "application/json", "Content-Length": "20" }, body: big });
    expect(understated.status).toBe(413);
    expect((await api.get("/people")).headers.get("x-total-count")).toBe("0");
  });

  it("refuses a body that is not UTF-8 with 400, storing nothing", async () => {
    const latin1 = new Uint8Array([...new TextEncoder().encode('{"lastname": "M'), 0xfc, ...new TextEncoder().encode('ller"}')]);
    const notUtf8 = await api.fetch("/people", { method: "POST", headers: { "Content-Type": "application/json" }, body: latin1 });
    expect(notUtf8.status).toBe(400);
    expect(((await notUtf8.json()) as { _error: { message: string } })._error.message).toBe("The request body is not valid UTF-8");
    expect((await api.get("/people")).headers.get("x-total-count")).toBe("0");
  });

  it("refuses prototype keys and leaves Object.prototype alone", async () => {
    const response = await api.post("/people", '{"lastname": "Proto", "__proto__": {"polluted": true}}');
    expect([400, 422]).toContain(response.status);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await api.get("/people")).headers.get("x-total-count")).toBe("0");
  });

  it("refuses operator keys in documents", async () => {
    const response = await api.post("/people", { lastname: "Op", $set: { x: 1 } });
    expect([400, 422]).toContain(response.status);
    expect((await api.get("/people")).headers.get("x-total-count")).toBe("0");
  });

  it("refuses absurd nesting", async () => {
    const deep = "[".repeat(200) + "]".repeat(200);
    expect((await api.post("/people", `{"lastname": "Deep", "role": ${deep}}`)).status).toBe(400);
  });

  it("refuses an empty list, a list of non-objects (item by item, as Eve) and a bare null", async () => {
    expect((await api.post("/people", [])).status).toBe(400);
    expect((await api.post("/people", [1, 2])).status).toBe(422);
    expect((await api.post("/people", "null")).status).toBe(400);
  });
});

// Python's json.dumps writes floats by repr(): exponents with a sign and two digits.
describe("floats in JSON", () => {
  const api = testApi({ RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { nums: { schema: { f: { type: "float" }, l: { type: "list" } } } } });
  afterAll(() => api.close());

  it("are written as Python writes them, in bodies and in XML alike", async () => {
    const created = await json(await api.post("/nums", '{"f": 0.5, "l": [1e-7, 0.00001, 1e20, 0.1, 123456789012.5, 7]}', { "Content-Type": "application/json" }));
    const text = await (await api.get(`/nums/${created._id}`)).text();
    expect(text).toContain('"f": 0.5, "l": [1e-07, 1e-05, 1e+20, 0.1, 123456789012.5, 7]');
    const xml = await (await api.get(`/nums/${created._id}`, { Accept: "application/xml" })).text();
    expect(xml).toContain("<l>1e-07</l>");
    expect(xml).toContain("<l>1e+20</l>");
  });
});
