// HEALTH_ENDPOINT and METRICS_ENDPOINT (docs/deploy.md): off by default; liveness without the
// database, readiness that answers 503 while a database is unreachable; never rate limited, never
// a resource (home, OpenAPI); a path that collides with a resource's refused at start-up. The
// metrics are Prometheus' text format, read here with a real parser of that format.
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterEach, describe, expect, it } from "vitest";
import { createHandler } from "../../src/handler.ts";
import type { ResourceSettings, Settings } from "../../src/settings/types.ts";
import { json, testApi, type TestApi } from "../support/api.ts";

const people: ResourceSettings = { resource_methods: ["GET", "POST"], schema: { name: { type: "string" } } };
/** A resource whose database is a Data API endpoint nobody listens at. */
const unreachable: Settings = {
  GONE_DB_URI: "http://127.0.0.1:1/app/none/endpoint/data/v1",
  DATA_API_KEY: "key",
  DOMAIN: { people, lost: { db_prefix: "GONE", schema: { name: { type: "string" } } } },
};

let api: TestApi;
afterEach(() => api.close());

interface Sample {
  labels?: Record<string, string>;
  value?: string;
  count?: string;
  buckets?: Record<string, string>;
}
interface Family {
  name: string;
  type: string;
  metrics: Sample[];
}

/**
 * The exposition, parsed (the parser throws on a line the format does not allow), and its text.
 * The parser keeps the labels of counters and gauges, but folds a histogram's series into one,
 * so a series' count is read from its `_count` line.
 */
async function scrape(path = "/metrics"): Promise<Family[] & { text: string }> {
  const response = await api.get(path);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const text = await response.text();
  return Object.assign(parsePrometheusTextFormat(text) as Family[], { text });
}

function sample(families: Family[], name: string, labels: Record<string, string> = {}): Sample | undefined {
  return families.find((family) => family.name === name)?.metrics.find((metric) => Object.entries(labels).every(([key, value]) => metric.labels?.[key] === value));
}

describe("health", () => {
  it("and metrics are off by default", async () => {
    api = testApi({ DOMAIN: { people } });
    expect((await api.get("/health")).status).toBe(404);
    expect((await api.get("/metrics")).status).toBe(404);
  });

  it("answers liveness and readiness with GET and HEAD, uncached, and nothing else", async () => {
    api = testApi({ HEALTH_ENDPOINT: "health", DOMAIN: { people } });
    const live = await api.get("/health");
    expect(live.status).toBe(200);
    expect(live.headers.get("cache-control")).toBe("no-store");
    // With its length, as every other answer: node wrote these chunked.
    expect(live.headers.get("content-length")).toBe(String(JSON.stringify({ status: "ok" }).length));
    expect(await json(live)).toEqual({ status: "ok" });
    const ready = await api.get("/health/ready");
    expect(ready.status).toBe(200);
    expect(await json(ready)).toEqual({ status: "ok", checks: { database: "ok" } });
    const head = await api.fetch("/health/ready", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(ready.headers.get("content-length"));
    expect(await head.text()).toBe("");
    const post = await api.post("/health", {});
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect(await json(post)).toMatchObject({ _status: "ERR", _error: { code: 405 } });
    expect((await api.get("/health/other")).status).toBe(404);
  });

  it("readiness is 503 while a database is unreachable, naming which but not why; liveness stays 200", async () => {
    api = testApi({ ...unreachable, HEALTH_ENDPOINT: "ops/health" });
    const ready = await api.get("/ops/health/ready");
    expect(ready.status).toBe(503);
    expect(await json(ready)).toEqual({ status: "unavailable", checks: { database: "ok", "database:GONE": "unavailable" } });
    expect((await api.get("/ops/health")).status).toBe(200);
  });

  it("is never rate limited, and sits under URL_PREFIX and API_VERSION", async () => {
    api = testApi({ URL_PREFIX: "api", API_VERSION: "v1", HEALTH_ENDPOINT: "health", METRICS_ENDPOINT: "metrics", RATE_LIMIT_GET: [1, 3600], DOMAIN: { people } });
    for (let i = 0; i < 3; i++) {
      const probe = await api.get("/api/v1/health/ready");
      expect(probe.status).toBe(200);
      expect(probe.headers.has("x-ratelimit-limit")).toBe(false);
      expect((await api.get("/api/v1/metrics")).status).toBe(200);
    }
    expect((await api.get("/health")).status).toBe(404);
    expect((await api.get("/api/v1/people")).status).toBe(200);
    expect((await api.get("/api/v1/people")).status).toBe(429);
  });

  it("is no resource of the home page or the OpenAPI document", async () => {
    api = testApi({ HEALTH_ENDPOINT: "health", METRICS_ENDPOINT: "metrics", DOMAIN: { people } });
    const home = (await json(await api.get("/"))) as { _links: { child: Array<{ href: string }> } };
    expect(home._links.child.map((link) => link.href)).toEqual(["people"]);
    const openapi = (await json(await api.get("/openapi.json"))) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths).length).toBeGreaterThan(0);
    expect(Object.keys(openapi.paths).filter((path) => /health|metrics/.test(path))).toEqual([]);
  });
});

describe("RATE_LIMIT_STORE \"database\"", () => {
  // On every driver and runtime: SQLite and D1 count with an upsert, MongoDB with $inc, the Data
  // API in its gateway, the embedded store in the process it serves (docs/deploy.md).
  it("counts in the database the data lives in, with the same answers as in memory", async () => {
    api = testApi({ RATE_LIMIT_STORE: "database", RATE_LIMIT_GET: [2, 3600], HEALTH_ENDPOINT: "health", DOMAIN: { people } });
    const left = 3600_000 - (Date.now() % 3600_000);
    if (left < 5000) await new Promise((resolve) => setTimeout(resolve, left + 100));
    const first = await api.get("/people");
    expect(first.status).toBe(200);
    expect([first.headers.get("x-ratelimit-limit"), first.headers.get("x-ratelimit-remaining")]).toEqual(["2", "1"]);
    expect(Number(first.headers.get("x-ratelimit-reset")) % 3600).toBe(0);
    expect((await api.get("/people")).status).toBe(200);
    const refused = await api.get("/people");
    expect(refused.status).toBe(429);
    expect(await json(refused)).toEqual({ _status: "ERR", _error: { code: 429, message: "Rate limit exceeded" } });
    expect((await api.post("/people", { name: "not limited" })).status).toBe(201);
    expect(await json(await api.get("/health/ready"))).toEqual({ status: "ok", checks: { database: "ok" } });
  });
});

describe("start-up refuses an operational path that collides", () => {
  const start = (settings: Settings) => () => createHandler(settings);

  it("with a resource's URL, its item URL, another endpoint, or the other operational path", () => {
    expect(start({ HEALTH_ENDPOINT: "people", DOMAIN: { people } })).toThrow("HEALTH_ENDPOINT 'people' collides with the collection URL of resource 'people' at /people: choose another path");
    const words = { item_url: 'regex("[a-z]+")', schema: {} };
    expect(start({ METRICS_ENDPOINT: "/words/metrics/", DOMAIN: { words } })).toThrow("METRICS_ENDPOINT 'words/metrics' collides with the item URL of resource 'words'");
    expect(start({ HEALTH_ENDPOINT: "openapi.json", DOMAIN: { people } })).toThrow("collides with the openapi endpoint");
    expect(start({ HEALTH_ENDPOINT: "ops", METRICS_ENDPOINT: "ops/ready", DOMAIN: { people } })).toThrow("METRICS_ENDPOINT 'ops/ready' collides with the health endpoint");
    expect(start({ HEALTH_ENDPOINT: "health", METRICS_ENDPOINT: "metrics", DOMAIN: { people } })).not.toThrow();
  });

  it("and refuses a path that is no path, or a drain bound that is no number of seconds", () => {
    expect(start({ HEALTH_ENDPOINT: "a b", DOMAIN: {} })).toThrow(/HEALTH_ENDPOINT/);
    expect(start({ SHUTDOWN_TIMEOUT: 0, DOMAIN: {} })).toThrow(/SHUTDOWN_TIMEOUT.*seconds/);
    expect(start({ HEALTH_TIMEOUT: "1" as never, DOMAIN: {} })).toThrow(/HEALTH_TIMEOUT/);
  });
});

describe("metrics", () => {
  it("count requests by resource, endpoint, method and status, with a latency histogram and the gauges", async () => {
    api = testApi({ METRICS_ENDPOINT: "metrics", DOMAIN: { people } });
    expect((await api.post("/people", { name: "ada" })).status).toBe(201);
    expect((await api.get("/people")).status).toBe(200);
    expect((await api.get("/people")).status).toBe(200);
    expect((await api.get("/people/0123456789abcdef01234567")).status).toBe(404);
    expect((await api.get("/nowhere")).status).toBe(404);
    expect((await api.fetch("/people", { method: "PURGE" })).status).toBe(405);
    const families = await scrape();
    const requests = (labels: Record<string, string>) => sample(families, "everest_http_requests_total", labels)?.value;
    expect(requests({ resource: "people", endpoint: "collection", method: "POST", status: "201" })).toBe("1");
    expect(requests({ resource: "people", endpoint: "collection", method: "GET", status: "200" })).toBe("2");
    expect(requests({ resource: "people", endpoint: "item", method: "GET", status: "404" })).toBe("1");
    expect(requests({ resource: "", endpoint: "none", method: "GET", status: "404" })).toBe("1");
    expect(requests({ resource: "people", endpoint: "collection", method: "OTHER", status: "405" })).toBe("1");
    const latency = families.find((family) => family.name === "everest_http_request_duration_seconds");
    expect(latency?.type).toBe("HISTOGRAM");
    expect(Object.keys(latency?.metrics[0]?.buckets ?? {})).toContain("+Inf");
    expect(families.text).toContain('everest_http_request_duration_seconds_count{resource="people",endpoint="collection",method="GET"} 2\n');
    expect(families.text).toContain('everest_http_request_duration_seconds_bucket{resource="people",endpoint="collection",method="GET",le="+Inf"} 2\n');
    expect(sample(families, "everest_open_streams")?.value).toBe("0");
    // The scrape itself is the one request in flight.
    expect(sample(families, "everest_http_requests_in_flight")?.value).toBe("1");
    // …and is counted by the next one.
    expect(sample(await scrape(), "everest_http_requests_total", { endpoint: "metrics", status: "200" })?.value).toBe("1");
  });

  it("are sent with their length in bytes, a resource named in any script included", async () => {
    api = testApi({ METRICS_ENDPOINT: "metrics", DOMAIN: { "üñï": people } });
    expect((await api.get("/%C3%BC%C3%B1%C3%AF")).status).toBe(200);
    const response = await api.get("/metrics");
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(new TextDecoder().decode(bytes)).toContain('resource="üñï"');
    expect(response.headers.get("content-length")).toBe(String(bytes.byteLength));
  });

  // A declared length is read whole by the runtime (src/http/body.ts), a chunked body as a stream.
  it.each([
    ["chunked", {}],
    ["with a Content-Length it never reaches", { "Content-Length": "1000" }],
  ])("count a client that goes away in the middle of its body (%s) as the client's 400, not a server error", async (_framing, length) => {
    api = testApi({ METRICS_ENDPOINT: "metrics", DOMAIN: { people } });
    // Half a document, then the client is gone: a server sees its connection closed mid-body.
    // Read as it is sent, so the half is on its way before the client leaves.
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (pulls++ === 0) return controller.enqueue(new TextEncoder().encode('{"name": "a'));
        await new Promise((resolve) => setTimeout(resolve, 100));
        controller.error(new Error("the client went away"));
      },
    });
    const sent = await api.fetch("/people", { method: "POST", headers: { "Content-Type": "application/json", ...length }, body, duplex: "half" } as RequestInit).catch(() => null);
    // In-process the handler's answer comes back; from a server the client that left hears nothing.
    if (sent) {
      expect(sent.status).toBe(400);
      expect((await json(sent))._error.message).toBe("The request body was not received in full");
    }
    const counted = async () => {
      for (let tries = 0; tries < 50; tries++) {
        const families = await scrape();
        if (sample(families, "everest_http_requests_total", { resource: "people", method: "POST" })) return families;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`the abandoned POST was never counted: ${(await scrape()).text}`);
    };
    const families = await counted();
    expect(sample(families, "everest_http_requests_total", { resource: "people", method: "POST", status: "400" })?.value).toBe("1");
    expect(sample(families, "everest_http_requests_total", { resource: "people", method: "POST", status: "500" })).toBeUndefined();
    expect((await json(await api.get("/people")))._meta.total).toBe(0);
  });

  it("count database failures, of requests and of readiness probes", async () => {
    api = testApi({ ...unreachable, HEALTH_ENDPOINT: "health", METRICS_ENDPOINT: "metrics" });
    const lost = await api.get("/lost");
    expect(lost.status).toBe(503);
    // A database that is away is worth trying again shortly, as the answer says.
    expect(lost.headers.get("retry-after")).toBe("1");
    expect((await api.get("/health/ready")).status).toBe(503);
    const families = await scrape();
    expect(sample(families, "everest_database_errors_total", { source: "request" })?.value).toBe("1");
    expect(sample(families, "everest_database_errors_total", { source: "readiness" })?.value).toBe("1");
    expect(sample(families, "everest_http_requests_total", { resource: "lost", status: "503" })?.value).toBe("1");
  });
});
