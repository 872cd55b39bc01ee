// everest's handler alone, on the built package: requests shaped as the Node adapter hands them
// (method, url and header reads answered from plain values, the body given directly, plain
// response parts wanted), so neither undici's Request/Response nor a socket is in the time.
// What the "handler alone" figures of bench/README.md measure; run it with --cpu-prof to profile.
//   node --import tsx bench/lib/handler-alone.ts [page|item|where|post|post100|patch|unknown] [--rounds 6] [--profile x.cpuprofile]
//   deno run -A bench/lib/handler-alone.ts … ; bun bench/lib/handler-alone.ts …
// --bytes adds the bytes allocated per request (V8 only; see bytesPerRequest below).
// --metrics turns METRICS_ENDPOINT on: what recording each request's metrics costs.
// --feed turns CHANGE_FEED on (no subscriber): what recording each write in the change log costs.
import process from "node:process";
import { buildPackage, builtEverest, DIST } from "./package.ts";
import { person, seed, settings } from "./people.ts";
import { startProfile } from "./profile.ts";

const ORIGIN = "http://bench.local";
const PER_ROUND = 20_000;
const workload = process.argv[2] ?? "item";
const option = (name: string): string | undefined => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined);
const rounds = Number(option("rounds") ?? 6);
/** Profiles every round but the first (the warm-up), the seeding left out. */
const profile = option("profile");

buildPackage();
const { createHandler } = await builtEverest();
const { PLAIN_RESPONSE_WANTED, responseParts } = (await import(`${DIST}src/http/known-body.js`)) as typeof import("../../src/http/known-body.ts");
const { READ_BODY } = (await import(`${DIST}src/http/body.js`)) as typeof import("../../src/http/body.ts");

const handler = createHandler({ ...(process.argv.includes("--metrics") ? { ...settings, METRICS_ENDPOINT: "metrics" } : settings), ...(process.argv.includes("--feed") ? { CHANGE_FEED: true } : {}) });
await seed(handler, ORIGIN, Number(option("documents") ?? 10_000));
const page = (await (await handler(new Request(`${ORIGIN}/people?max_results=50`))).json()) as { _items: Array<{ _id: string; lastname: string; _etag: string }> };
const sample = page._items;
const encoder = new TextEncoder();

/**
 * Headers answered from a plain record, as adapters/node.ts's IncomingHeaders answers from
 * node:http's. A class, not closures made per request: under tsx each closure is also named
 * with a defineProperty, which was about a seventh of a GET item's time here, none of it everest's.
 */
class PlainHeaders {
  constructor(private readonly record: Record<string, string>) {}
  get(name: string): string | null {
    return this.record[name.toLowerCase()] ?? null;
  }
  has(name: string): boolean {
    return name.toLowerCase() in this.record;
  }
}

/** A request as adapters/node.ts makes it, reduced to what the handler reads. */
class PlainRequest {
  readonly headers: PlainHeaders;
  readonly body: object | null;
  readonly [PLAIN_RESPONSE_WANTED] = true;
  constructor(
    readonly method: string,
    readonly url: string,
    headers: Record<string, string>,
    private readonly text: string | undefined,
  ) {
    this.headers = new PlainHeaders(headers);
    this.body = text === undefined ? null : {};
  }
  [READ_BODY](): Promise<Uint8Array> {
    return Promise.resolve(encoder.encode(this.text ?? ""));
  }
}

const NO_HEADERS: Record<string, string> = {};
function request(method: string, path: string, headers = NO_HEADERS, body?: string): Request {
  return new PlainRequest(method, ORIGIN + path, headers, body) as unknown as Request;
}

const JSON_TYPE = { "content-type": "application/json" };
let written = 0;
/** POST bodies made before each round's clock starts: generating and stringifying them is the client's work. */
let bodies: string[] = [];
const newPeople = (count: number) => JSON.stringify(count === 1 ? person(written++, "h") : Array.from({ length: count }, () => person(written++, "h")));
const send: Record<string, (i: number) => Promise<Response>> = {
  page: () => handler(request("GET", "/people")),
  item: (i) => handler(request("GET", `/people/${sample[i % 50]!._id}`)),
  where: (i) => handler(request("GET", `/people?where=${encodeURIComponent(JSON.stringify({ lastname: sample[i % 50]!.lastname }))}`)),
  post: (i) => handler(request("POST", "/people", JSON_TYPE, bodies[i])),
  post100: (i) => handler(request("POST", "/people", JSON_TYPE, bodies[i])),
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
// A bulk POST and a page of 25 are many documents' work: fewer of them make a round of comparable length.
const perRound = workload === "post100" || workload === "page" ? PER_ROUND / 100 : PER_ROUND;
if (!run) throw new Error(`unknown workload '${workload}' (${Object.keys(send).join(", ")})`);

let session: Awaited<ReturnType<typeof startProfile>> | null = null;
for (let round = 0; round < rounds; round++) {
  if (round === 1 && profile) session = await startProfile();
  const perBody = { post: 1, post100: 100 }[workload];
  bodies = perBody ? Array.from({ length: perRound }, () => newPeople(perBody)) : [];
  const start = process.cpuUsage();
  for (let i = 0; i < perRound; i++) {
    const response = await run(i);
    if (response.status >= 300 && workload !== "unknown") throw new Error(`${workload}: ${response.status}`);
  }
  const used = process.cpuUsage(start);
  console.log(`${workload}: ${((used.user + used.system) / perRound).toFixed(1)} µs CPU per request`);
}
if (session) await session.stop(profile!);
if (process.argv.includes("--bytes")) await bytesPerRequest();
process.exit(0);

/**
 * Bytes allocated per request, the measure of garbage the collector will have to deal with: the
 * heap's growth over a batch of requests run between two forced collections, with a young
 * generation large enough that none happens during the batch (the least of five batches, as a
 * collection the runtime makes anyway only lowers a batch's figure). Unlike CPU time it does
 * not depend on what else the machine runs, so it ranks small changes. V8 only:
 *   node --expose-gc --max-semi-space-size=128 --import tsx bench/lib/handler-alone.ts patch --rounds 3 --bytes
 *   deno run -A --v8-flags=--expose-gc,--max-semi-space-size=128 bench/lib/handler-alone.ts patch --rounds 3 --bytes
 */
async function bytesPerRequest(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("--bytes needs the collector exposed (--expose-gc) and a young generation of 128 MB (--max-semi-space-size=128)");
  const { getHeapStatistics } = await import("node:v8");
  const batch = workload === "post100" || workload === "page" ? 20 : 1000;
  const perBody = { post: 1, post100: 100 }[workload];
  let least = Infinity;
  for (let trial = 0; trial < 5; trial++) {
    bodies = perBody ? Array.from({ length: batch }, () => newPeople(perBody)) : [];
    gc();
    const before = getHeapStatistics().used_heap_size;
    for (let i = 0; i < batch; i++) await run!(i);
    least = Math.min(least, (getHeapStatistics().used_heap_size - before) / batch);
  }
  console.log(`${workload}: ${Math.round(least)} bytes allocated per request`);
}
