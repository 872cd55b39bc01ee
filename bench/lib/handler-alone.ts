// everest's handler alone, on the built package: requests shaped as the Node adapter hands them
// (method, url and header reads answered from plain values, the body given directly, plain
// response parts wanted), so neither undici's Request/Response nor a socket is in the time.
// What the "handler alone" figures of bench/README.md measure; run it with --cpu-prof to profile.
//   node --import tsx bench/lib/handler-alone.ts [item|where|post|patch|unknown] [--rounds 6]
import process from "node:process";
import { buildPackage, builtEverest, DIST } from "./package.ts";
import { person, seed, settings } from "./people.ts";

const ORIGIN = "http://bench.local";
const PER_ROUND = 20_000;
const workload = process.argv[2] ?? "item";
const rounds = Number(process.argv.includes("--rounds") ? process.argv[process.argv.indexOf("--rounds") + 1] : 6);

buildPackage();
const { createHandler } = await builtEverest();
const { PLAIN_RESPONSE_WANTED, responseParts } = (await import(`${DIST}src/http/known-body.js`)) as typeof import("../../src/http/known-body.ts");
const { READ_BODY } = (await import(`${DIST}src/http/body.js`)) as typeof import("../../src/http/body.ts");

const handler = createHandler(settings);
await seed(handler, ORIGIN, 10_000);
const page = (await (await handler(new Request(`${ORIGIN}/people?max_results=50`))).json()) as { _items: Array<{ _id: string; lastname: string; _etag: string }> };
const sample = page._items;
const encoder = new TextEncoder();

/** A request as adapters/node.ts makes it, reduced to what the handler reads. */
function request(method: string, path: string, headers: Record<string, string> = {}, body?: string): Request {
  return {
    method,
    url: ORIGIN + path,
    headers: { get: (name: string) => headers[name.toLowerCase()] ?? null, has: (name: string) => name.toLowerCase() in headers },
    body: body === undefined ? null : {},
    [PLAIN_RESPONSE_WANTED]: true,
    [READ_BODY]: () => Promise.resolve(encoder.encode(body ?? "")),
  } as unknown as Request;
}

const JSON_TYPE = { "content-type": "application/json" };
let written = 0;
const send: Record<string, (i: number) => Promise<Response>> = {
  item: (i) => handler(request("GET", `/people/${sample[i % 50]!._id}`)),
  where: (i) => handler(request("GET", `/people?where=${encodeURIComponent(JSON.stringify({ lastname: sample[i % 50]!.lastname }))}`)),
  post: () => handler(request("POST", "/people", JSON_TYPE, JSON.stringify(person(written++, "h")))),
  patch: async (i) => {
    const doc = sample[i % 50]!;
    const response = await handler(request("PATCH", `/people/${doc._id}`, { ...JSON_TYPE, "if-match": doc._etag }, JSON.stringify({ firstname: `n${i % 100}` })));
    // From the plain parts: asking the Response would build undici's inside the timed loop.
    doc._etag = responseParts(response)!.headers.etag!.slice(1, -1);
    return response;
  },
  unknown: () => handler(request("GET", "/nothing")),
};
const run = send[workload];
if (!run) throw new Error(`unknown workload '${workload}' (${Object.keys(send).join(", ")})`);

for (let round = 0; round < rounds; round++) {
  const start = process.cpuUsage();
  for (let i = 0; i < PER_ROUND; i++) {
    const response = await run(i);
    if (response.status >= 300 && workload !== "unknown") throw new Error(`${workload}: ${response.status}`);
  }
  const used = process.cpuUsage(start);
  console.log(`${workload}: ${((used.user + used.system) / PER_ROUND).toFixed(1)} µs CPU per request`);
}
process.exit(0);
