// Memory and many connections: what the server holds per 10,000 documents, what a request in
// flight costs, the latency of every workload under 64 connections, and whether the live heap
// grows over a mixed run (a leak check) — everest beside the hand-written equivalent, on every
// installed runtime, with the servers and pinning of http.ts.
//   npx tsx bench/memory.ts [--quick] [--runtimes node,bun,deno] [--leak-minutes 5]
import { load, probe, type Step, type Traffic } from "./lib/load.ts";
import { pinning, pinSelf, runtimes, startServer, type Runtime, type Server } from "./lib/proc.ts";
import { fmt, table } from "./lib/table.ts";
import { sampleDocs, WORKLOADS, type SampleDoc } from "./lib/workloads.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const listed = (flag: string) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1]!.split(",") : null);
const only = listed("--runtimes");
/**
 * Two minutes: everest's live heap rises and falls by 1-2 MB over a minute or more, its bounded
 * caches filling and turning over (the kept JSON of src/render/kept-json.ts among them), so one
 * minute's slope read +1.1-1.6 MB "GROWS" where the same traffic in-process, 500,000 requests
 * over 170,000 documents, stays within 0.8 MB of where it began (bench/README.md, "A sixth pass").
 */
const leakMinutes = Number(listed("--leak-minutes")?.[0] ?? (quick ? 0.25 : 2));
const DOCUMENTS = 10_000;
const MANY = 64;
const LOAD = quick ? { warmup: 0.5, duration: 1.5 } : { warmup: 1, duration: 3 };
/** RSS samples over the leak check; its growth is shown for the second half, after the heap has found its size. */
const SAMPLES = 20;
/**
 * Live-heap samples (a full collection, then the heap's size) over the leak check, the first at
 * its start. The verdict is theirs: RSS follows when the collector runs and how far the heap has
 * grown for the load, so it read "GROWS" for the hand-written server too (bench/README.md).
 */
const HEAP_SAMPLES = 13;
/** Growth of the live heap, from the second heap sample on, that still counts as flat, in MB per minute. */
const FLAT_MB_PER_MINUTE = 1;

const KINDS = ["everest", "hand"] as const;
type Kind = (typeof KINDS)[number];

const cores = pinning();
if (cores) pinSelf(cores.generator);

const mb = (bytes: number | null | undefined) => (bytes === null || bytes === undefined ? "–" : fmt.mb(bytes));
const kb = (bytes: number | null | undefined) => (bytes === null || bytes === undefined ? "–" : Math.round(bytes / 1024).toLocaleString("en-US"));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function started(runtime: Runtime, kind: Kind, documents: number): Promise<Server> {
  return startServer(runtime, [kind, "--documents", String(documents)], cores?.server ?? null);
}

/** RSS once the server has answered the same reads for a second and had a moment to settle. */
async function settledRss(server: Server): Promise<number | null> {
  const reads = WORKLOADS.find((w) => w.name === "GET collection page")!.traffic([]);
  await load(server.url, reads, { connections: 10, duration: 1 });
  await pause(500);
  return server.rss();
}

interface HeldRow {
  empty: number | null;
  full: number | null;
}

/** Requests that fail on purpose, so the leak check covers error paths too. */
function failing(sample: SampleDoc[]): Traffic {
  let i = 0;
  const steps: Array<() => Step> = [
    () => ({ method: "GET", path: "/people/000000000000000000000000" }),
    () => ({ method: "POST", path: "/people", headers: { "Content-Type": "application/json" }, body: '{"lastname": 7}' }),
    () => ({ method: "PATCH", path: `/people/${sample[0]!.id}`, headers: { "Content-Type": "application/json", "If-Match": "stale" }, body: "{}" }),
    // Encoded, as a client sends it: raw, its space split the request line, which Bun's parser
    // refuses by dropping the connection, and the whole run stalled (181 requests in a minute).
    () => ({ method: "GET", path: `/people?where=${encodeURIComponent('{"lastname": ')}` }),
  ];
  return { readsResponses: false, next: () => steps[i++ % steps.length]!() };
}

/** Every workload but the growing ones (POSTs add documents), and the failures, in turn. */
function mixed(sample: SampleDoc[]): Traffic {
  const traffics = [...WORKLOADS.filter((w) => !w.name.startsWith("POST")).map((w) => w.traffic(sample)), failing(sample)];
  let i = 0;
  return { readsResponses: traffics.some((t) => t.readsResponses), next: () => traffics[i++ % traffics.length]!.next() };
}

/** A size in bytes, with the minute of the leak check it was taken at. */
interface Sample {
  minute: number;
  bytes: number;
}

interface LeakRow {
  /** RSS, sampled evenly over the run. */
  rss: Sample[];
  /** Live heap after a full collection. */
  heap: Sample[];
  requests: number;
}

/** Least-squares slope of values over minutes, in MB per minute. */
function growth(points: Sample[]): number {
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const mx = mean(points.map((p) => p.minute));
  const my = mean(points.map((p) => p.bytes));
  let num = 0;
  let den = 0;
  for (const { minute, bytes } of points) {
    num += (minute - mx) * (bytes - my);
    den += (minute - mx) ** 2;
  }
  return den === 0 ? 0 : num / den / 2 ** 20;
}

async function leakCheck(server: Server, sample: SampleDoc[], seconds: number): Promise<LeakRow> {
  const rss: Sample[] = [];
  const heap: Sample[] = [];
  const started = performance.now();
  const minute = () => (performance.now() - started) / 60_000;
  const sampler = setInterval(() => {
    const bytes = server.rss();
    if (bytes !== null) rss.push({ minute: minute(), bytes });
  }, (seconds * 1000) / SAMPLES);
  let running = true;
  const heapSampler = (async () => {
    for (let i = 0; i < HEAP_SAMPLES && running; i++) {
      if (i > 0) await pause((seconds * 1000) / (HEAP_SAMPLES - 1) - 50);
      const bytes = await server.heapAfterGc();
      if (bytes !== null) heap.push({ minute: minute(), bytes });
    }
  })();
  try {
    const measurement = await load(server.url, mixed(sample), { connections: 10, duration: seconds });
    return { rss, heap, requests: measurement.requests };
  } finally {
    running = false;
    clearInterval(sampler);
    await heapSampler;
  }
}

/** The leak check's row: RSS as sampled, the live heap and the verdict on it. */
function leakCells(kind: Kind, { rss, heap, requests }: LeakRow): string[] {
  const rssCells = rss.length < 4 ? ["–", "–", "–", "–"] : [mb(rss[0]!.bytes), mb(rss.at(-1)!.bytes), mb(Math.max(...rss.map((s) => s.bytes))), growth(rss.slice(rss.length >> 1)).toFixed(1)];
  if (heap.length < 3) return [kind, fmt.rps(requests), ...rssCells, "–", "–", "–", "n/a"];
  const judged = growth(heap.slice(1));
  return [kind, fmt.rps(requests), ...rssCells, mb(heap[0]!.bytes), mb(heap.at(-1)!.bytes), judged.toFixed(2), judged <= FLAT_MB_PER_MINUTE ? "flat" : "GROWS"];
}

async function run(runtime: Runtime): Promise<void> {
  console.log(`\n### ${runtime.name}\n`);
  const held = new Map<Kind, HeldRow>();
  const servers = new Map<Kind, Server>();
  const samples = new Map<Kind, SampleDoc[]>();
  try {
    for (const kind of KINDS) {
      const empty = await started(runtime, kind, 0);
      let emptyRss: number | null;
      try {
        emptyRss = await settledRss(empty);
      } finally {
        await empty.stop();
      }
      const full = await started(runtime, kind, DOCUMENTS);
      servers.set(kind, full);
      // PATCH lends each connection a document of its own.
      samples.set(kind, await sampleDocs(full.url, MANY * 2));
      held.set(kind, { empty: emptyRss, full: await settledRss(full) });
    }
    console.log(
      table(
        ["server", "RSS, no documents (MB)", `RSS, ${DOCUMENTS.toLocaleString("en-US")} documents (MB)`, "MB per 10,000 documents"],
        KINDS.map((kind) => {
          const row = held.get(kind)!;
          const per = row.empty !== null && row.full !== null ? ((row.full - row.empty) * 10_000) / DOCUMENTS : null;
          return [kind, mb(row.empty), mb(row.full), mb(per)];
        }),
      ),
    );

    console.log(`\n${MANY} connections (${LOAD.warmup}s warm-up + ${LOAD.duration}s): latency, and resident memory per request in flight (peak RSS during the load minus RSS before it, ÷ ${MANY})\n`);
    const rows: string[][] = [];
    for (const workload of WORKLOADS) {
      const cells: string[] = [];
      const p99 = new Map<Kind, number>();
      for (const kind of KINDS) {
        const server = servers.get(kind)!;
        const traffic = workload.traffic(samples.get(kind)!);
        const answer = await probe(server.url, traffic);
        if (answer.status >= 300) {
          cells.push("n/a", "", "", "");
          continue;
        }
        await load(server.url, traffic, { connections: MANY, duration: LOAD.warmup });
        await pause(200);
        const before = server.rss();
        server.resetPeak();
        // A bulk POST takes long enough that 64 of them need more time to complete a fair number.
        const m = await load(server.url, traffic, { connections: MANY, duration: LOAD.duration * (workload.name.startsWith("POST 100") ? 4 : 1) });
        const peak = server.peakRss();
        p99.set(kind, m.p99);
        cells.push(fmt.rps(m.rps) + (m.failures > 0 ? "!" : ""), fmt.ms(m.p50), fmt.ms(m.p99), kb(before !== null && peak !== null ? Math.max(0, peak - before) / MANY : null));
      }
      const ratio = p99.has("everest") && p99.has("hand") ? fmt.ratio(p99.get("everest")! / p99.get("hand")!) : "n/a";
      rows.push([workload.name, ...cells, ratio]);
    }
    console.log(
      table(["workload", "everest req/s", "p50 ms", "p99 ms", "KB/request", "hand req/s", "p50 ms", "p99 ms", "KB/request", "p99 everest ÷ hand"], rows),
    );

    const seconds = leakMinutes * 60;
    console.log(
      `\nLeak check: ${fmt.ms(seconds)} s of mixed traffic (reads, PATCH, and requests answered 404, 412, 422 and 400), 10 connections, both servers at once; RSS sampled ${SAMPLES} times, the live heap (after a full collection) ${HEAP_SAMPLES} times, the verdict on its growth from the second sample on\n`,
    );
    const leaks = await Promise.all(KINDS.map((kind) => leakCheck(servers.get(kind)!, samples.get(kind)!, seconds)));
    console.log(
      table(
        ["server", "requests", "RSS first MB", "RSS last MB", "RSS max MB", "RSS second half MB/min", "live heap first MB", "live heap last MB", "live heap MB/min", "verdict"],
        KINDS.map((kind, i) => leakCells(kind, leaks[i]!)),
      ),
    );
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
  }
}

console.log(`## Memory and ${MANY} connections: ${DOCUMENTS.toLocaleString("en-US")} documents`);
console.log(cores ? `servers on core ${cores.server}, load generator on core ${cores.generator}` : "not pinned (fewer than two cores or no taskset)");
for (const runtime of runtimes().filter((r) => !only || only.includes(r.name))) await run(runtime);
