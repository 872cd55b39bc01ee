// everest and the hand-written equivalents (hand.ts, lean.ts) in one process, no sockets: the same
// Requests handed to every fetch handler, rounds interleaved, CPU time per request. Isolates what each framework
// costs from the server around it, and is what a CPU profile of one workload should run:
//   node --import tsx bench/lib/inprocess.ts [--only everest] [--workloads "GET item"] [--rounds 5]
//   node --import tsx bench/lib/inprocess.ts --only everest --workloads POST --profile post.cpuprofile
//   bun bench/lib/inprocess.ts … ; deno run -A bench/lib/inprocess.ts …
import process from "node:process";
import { buildPackage, builtEverest } from "./package.ts";
import { person, seed, settings } from "./people.ts";
import { startProfile } from "./profile.ts";

type Fetch = (request: Request) => Promise<Response> | Response;

const argv = process.argv.slice(2);
const option = (name: string): string | null => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1]! : null);
const only = option("only");
const chosen = option("workloads")?.split(",");
const ROUNDS = Number(option("rounds") ?? 5);
/** A CPU profile of the measured rounds (not of seeding), for Chrome DevTools or any .cpuprofile reader. */
const profile = option("profile");
const DOCUMENTS = 10_000;
const ORIGIN = "http://bench.local";
const JSON_TYPE = { "Content-Type": "application/json" };

interface Target {
  name: string;
  fetch: Fetch;
  sample: Array<{ id: string; lastname: string; etag: string }>;
}

let written = 0;

interface Workload {
  name: string;
  /** Requests per round; a POST of 100 is 100 times the work of a GET. */
  count: number;
  request(target: Target, i: number): Request;
  /** Reads what the response says the next request needs (PATCH follows ETags). */
  after?(target: Target, i: number, body: string): void;
}

const WORKLOADS: Workload[] = [
  { name: "GET collection page", count: 100, request: () => new Request(`${ORIGIN}/people`) },
  { name: "GET item by _id", count: 2000, request: (t, i) => new Request(`${ORIGIN}/people/${t.sample[i % 50]!.id}`) },
  {
    name: "GET where unique field",
    count: 2000,
    request: (t, i) => new Request(`${ORIGIN}/people?where=${encodeURIComponent(JSON.stringify({ lastname: t.sample[i % 50]!.lastname }))}`),
  },
  {
    name: "POST one document",
    count: 1000,
    request: () => new Request(`${ORIGIN}/people`, { method: "POST", headers: JSON_TYPE, body: JSON.stringify(person(written++, "b")) }),
  },
  {
    name: "PATCH with If-Match",
    count: 1000,
    request: (t, i) => {
      const doc = t.sample[i % 50]!;
      return new Request(`${ORIGIN}/people/${doc.id}`, {
        method: "PATCH",
        headers: { ...JSON_TYPE, "If-Match": doc.etag },
        body: JSON.stringify({ firstname: `n${i % 1000}` }),
      });
    },
    after: (t, i, body) => {
      t.sample[i % 50]!.etag = (JSON.parse(body) as { _etag: string })._etag;
    },
  },
  {
    name: "POST 100 documents",
    count: 20,
    request: () =>
      new Request(`${ORIGIN}/people`, {
        method: "POST",
        headers: JSON_TYPE,
        body: JSON.stringify(Array.from({ length: 100 }, () => person(written++, "b"))),
      }),
  },
];

async function prepare(name: string, fetch: Fetch): Promise<Target> {
  await seed(fetch, ORIGIN, DOCUMENTS);
  const response = await fetch(new Request(`${ORIGIN}/people?max_results=50`));
  const body = (await response.json()) as { _items: Array<{ _id: string; lastname: string; _etag: string }> };
  return { name, fetch, sample: body._items.map((d) => ({ id: d._id, lastname: d.lastname, etag: d._etag })) };
}

/** CPU µs per request over one round. */
async function round(target: Target, workload: Workload): Promise<number> {
  const requests = Array.from({ length: workload.count }, (_, i) => i);
  const start = process.cpuUsage();
  for (const i of requests) {
    const response = await target.fetch(workload.request(target, i));
    const body = await response.text();
    if (response.status >= 300) throw new Error(`${target.name} ${workload.name}: ${response.status} ${body.slice(0, 200)}`);
    workload.after?.(target, i, body);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / workload.count;
}

async function main(): Promise<void> {
  const targets: Target[] = [];
  if (!only || only === "everest") {
    buildPackage();
    const { createHandler } = await builtEverest();
    targets.push(await prepare("everest", createHandler(settings)));
  }
  if (!only || only === "hand") {
    const { handWritten } = await import("./hand.ts");
    const app = handWritten();
    targets.push(await prepare("hand", (request) => app.fetch(request)));
  }
  if (!only || only === "lean") {
    const { leanHandWritten } = await import("./lean.ts");
    const app = leanHandWritten();
    targets.push(await prepare("lean", (request) => app.fetch(request)));
  }
  const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
  const session = profile ? await startProfile() : null;
  console.log(`in-process, ${runtime}: CPU µs per request, min of ${ROUNDS} interleaved rounds`);
  for (const workload of WORKLOADS.filter((w) => !chosen || chosen.some((p) => w.name.startsWith(p)))) {
    const best = new Map<string, number>();
    for (let r = 0; r < ROUNDS; r++) {
      for (const target of targets) best.set(target.name, Math.min(best.get(target.name) ?? Infinity, await round(target, workload)));
    }
    const cells = targets.map((t) => `${t.name} ${best.get(t.name)!.toFixed(1)}`);
    const ratio = ["hand", "lean"]
      .filter((name) => best.has("everest") && best.has(name))
      .map((name) => `  ÷${name} ${(best.get(name)! / best.get("everest")!).toFixed(2)}×`)
      .join("");
    console.log(`${workload.name.padEnd(24)} ${cells.join("  ")}${ratio}`);
  }
  if (session) await session.stop(profile!);
}

await main();
