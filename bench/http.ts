// HTTP throughput: everest beside the floor and the hand-written equivalent, on every installed
// runtime. Each server is a child process pinned to its own core; autocannon runs here.
//   npx tsx bench/http.ts [--quick] [--runtimes node,bun,deno] [--workloads "GET item,POST"]
//                         [--db memory|sqlite|file] [--documents 10000]
// --db runs everest on that store, on a fresh file per server (sqlite: needs node:sqlite, so
// run the harness with Node ≥ 22.5 — servers on Node use the harness's own node).
import { freshStore } from "./lib/stores.ts";
import { load, probe, type Measurement, type Step, type Traffic } from "./lib/load.ts";
import { pinning, pinSelf, runtimes, startServer, type Runtime, type Server } from "./lib/proc.ts";
import { fmt, table } from "./lib/table.ts";
import { floorTraffic, sampleDocs, WORKLOADS, type SampleDoc, type Workload } from "./lib/workloads.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const listed = (flag: string) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1]!.split(",") : null);
const only = listed("--runtimes");
/** Workloads whose names start with one of these (`--workloads "GET item,PATCH"`), for profiling one at a time. */
const chosen = listed("--workloads");
/** everest's store (bench/lib/stores.ts); the baselines always keep theirs in memory. */
const database = listed("--db")?.[0] ?? "memory";
const workloads = WORKLOADS.filter((w) => !chosen || chosen.some((prefix) => w.name.startsWith(prefix)));
/** Seconds of warm-up and of measurement: Node, whose table the targets are about, gets the longest. */
interface Plan {
  warmup: number;
  duration: number;
}
const plan = (runtime: Runtime): Plan => (quick ? { warmup: 0.5, duration: 1 } : runtime.name === "node" ? { warmup: 1, duration: 2 } : { warmup: 0.5, duration: 1.5 });
const CONNECTIONS = 10;
const DOCUMENTS = Number(listed("--documents")?.[0] ?? 10_000);
/** everest ÷ hand-written per workload and runtime (issue 14's table): reads ≥ 0.9×, the collection page more, writes on Bun and Deno 0.8×. */
function targetHand(workload: string, runtime: Runtime["name"]): number {
  if (workload === "GET collection page") return runtime === "bun" ? 1.2 : 1.5;
  if ((workload === "POST one document" || workload === "PATCH with If-Match") && runtime !== "node") return 0.8;
  return 0.9;
}
const TARGET_FLOOR_ITEM = 0.5;

interface Row {
  measurement?: Measurement;
  rss?: number | null;
  /** Server CPU time (user + system) per completed request, in µs. */
  cpu?: number | null;
  /** Why there is no measurement. */
  error?: string;
  /** The request a probe sent, and how big the answer was: the floor replays it with a body that size. */
  step?: Step;
  bytes?: number;
}

const firstLines = (error: unknown, n = 3) => (error instanceof Error ? error.message : String(error)).split("\n").slice(0, n).join(" / ");

const cores = pinning();
if (cores) pinSelf(cores.generator);

const KINDS = ["everest", "hand", "floor"] as const;
type Kind = (typeof KINDS)[number];

interface Contender {
  server?: Server;
  sample: SampleDoc[];
  /** Why this server could not be measured at all. */
  error?: string;
  rows: Map<string, Row>;
  /**
   * Each workload's Traffic, kept from the warm-up to the measurement: a PATCH that a load's end
   * left unanswered took its document's new ETag with it, and only the Traffic that lent the
   * document knows not to send it again.
   */
  traffic: Map<Workload, Traffic>;
}

function trafficOf(contender: Contender, workload: Workload): Traffic {
  let traffic = contender.traffic.get(workload);
  if (!traffic) contender.traffic.set(workload, (traffic = workload.traffic(contender.sample)));
  return traffic;
}

async function start(runtime: Runtime, kind: Kind): Promise<Contender> {
  let server: Server | undefined;
  try {
    const db = kind === "everest" ? ["--db", freshStore(database)] : [];
    // Seeding goes through HTTP: a million documents take minutes.
    server = await startServer(runtime, [kind, "--documents", String(DOCUMENTS), ...db], cores?.server ?? null, Math.max(120_000, DOCUMENTS));
    return { server, sample: kind === "floor" ? [] : await sampleDocs(server.url), rows: new Map(), traffic: new Map() };
  } catch (error) {
    await server?.stop();
    return { sample: [], error: firstLines(error), rows: new Map(), traffic: new Map() };
  }
}

/**
 * Probe (servers with data) and warm-up on the first round, then the measurement with the peak
 * RSS it caused.
 */
async function measure(contender: Contender, traffic: Traffic, round: number, probing: boolean, { warmup, duration }: Plan, longer = 1): Promise<Row> {
  const server = contender.server!;
  const row: Row = {};
  try {
    if (probing && round === 0) {
      const answer = await probe(server.url, traffic);
      if (answer.status >= 300) return { error: `${answer.status}: ${answer.body.slice(0, 120)}` };
      row.step = answer.step;
      row.bytes = answer.bytes;
    }
    if (round === 0) await load(server.url, traffic, { connections: CONNECTIONS, duration: warmup });
    server.resetPeak();
    const cpuBefore = server.cpuSeconds();
    row.measurement = await load(server.url, traffic, { connections: CONNECTIONS, duration: duration * longer });
    const cpuAfter = server.cpuSeconds();
    row.rss = server.peakRss();
    row.cpu = cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1e6) / row.measurement.requests;
    if (row.measurement.rps === 0) return { error: `no response completed within ${duration}s (${row.measurement.statuses || "none"})` };
  } catch (error) {
    row.error = firstLines(error);
  }
  return row;
}

/**
 * How many times longer a bulk workload is measured. A bulk POST allocates a hundred documents a
 * request, and a 1.5-s window is short beside the full collections of a heap growing that fast:
 * on Bun, over the same code, everest read 1,202-1,791 µs and hand 1,247-1,443 in such windows;
 * measured four times longer, 1,351 and 1,396 against 1,486 and 1,560 (bench/README.md, ninth
 * round). Twice, since each workload has three rounds (tenth round): four times over three
 * rounds stored some 1.25 million documents on Bun (1.9 GB of RSS for everest).
 */
const BULK_LONGER = 2;

/** Requests of each workload before any is measured; a bulk workload sends this many documents. */
const MIXED_WARMUP_REQUESTS = 5_000;

/**
 * Every workload in turn, before any is measured: a server in use sees all kinds of request, and
 * without this each measurement also timed the JIT recompiling code for the kind it had not seen
 * yet (on Bun, 120-150 ms of compiling inside PATCH's 1.5 s for everest; bench/README.md, "eighth
 * round"). A count, not a time, so the faster server does not end up holding more documents.
 * Failures show in the measurements themselves.
 */
async function warmEveryWorkload(contender: Contender): Promise<void> {
  for (const workload of workloads) {
    const amount = Math.ceil(MIXED_WARMUP_REQUESTS / (workload.batch ?? 1));
    await load(contender.server!.url, trafficOf(contender, workload), { connections: CONNECTIONS, duration: 0, amount }).catch(() => undefined);
  }
}

/**
 * Measurement windows per workload and server, taken in turn (everest, hand, floor, everest, …)
 * and reported by their median. One window each left a ratio to whatever else the machine ran
 * during one of them: over five full runs of the same code Bun's GET item read 0.89-1.03× hand
 * (bench/README.md, tenth round).
 */
const ROUNDS = quick ? 1 : 3;

/** The middle value; for an even count the lower middle one (never more than was measured). */
function median(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[(sorted.length - 1) >> 1]!;
}

/**
 * The rounds of one server and workload as one row: each figure the median of the rounds' (so
 * one window's burst of background load moves none of them), failures summed, peak RSS the
 * highest, the first round's probe. An error in any round is the row's.
 */
function combine(rounds: Row[]): Row {
  const failed = rounds.find((row) => row.error || !row.measurement);
  if (failed) return failed;
  const measurements = rounds.map((row) => row.measurement!);
  const pick = (field: "requests" | "rps" | "p50" | "p99") => median(measurements.map((m) => m[field]));
  const cpus = rounds.map((row) => row.cpu);
  const failures = measurements.reduce((sum, m) => sum + m.failures, 0);
  return {
    ...rounds[0],
    measurement: { requests: pick("requests"), rps: pick("rps"), p50: pick("p50"), p99: pick("p99"), failures, statuses: measurements.map((m) => m.statuses).filter(Boolean).join("; ") },
    rss: Math.max(...rounds.map((row) => row.rss ?? 0)) || null,
    cpu: cpus.every((cpu) => typeof cpu === "number") ? median(cpus as number[]) : null,
  };
}

/**
 * All three servers run side by side and take turns workload by workload and round by round,
 * so background load on the machine hits the three alike instead of whichever happened to run
 * during it.
 */
async function compare(runtime: Runtime): Promise<Record<Kind, Contender>> {
  const contenders = {} as Record<Kind, Contender>;
  const timing = plan(runtime);
  for (const kind of KINDS) contenders[kind] = await start(runtime, kind);
  try {
    for (const kind of ["everest", "hand"] as const) if (contenders[kind].server) await warmEveryWorkload(contenders[kind]);
    for (const workload of workloads) {
      const rounds: Record<Kind, Row[]> = { everest: [], hand: [], floor: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const kind of ["everest", "hand"] as const) {
          const contender = contenders[kind];
          if (contender.server) rounds[kind].push(await measure(contender, trafficOf(contender, workload), round, true, timing, workload.batch ? BULK_LONGER : 1));
        }
        // The floor answers the request everest got with a body the size of everest's answer (the equivalent's where everest had none).
        const probed = [rounds.everest[0], rounds.hand[0]].find((row) => row?.step);
        if (contenders.floor.server) {
          rounds.floor.push(probed ? await measure(contenders.floor, floorTraffic(probed.step!, probed.bytes!), round, false, timing) : { error: "no answer to match" });
        }
      }
      for (const kind of KINDS) if (rounds[kind].length) contenders[kind].rows.set(workload.name, combine(rounds[kind]));
    }
  } finally {
    await Promise.all(KINDS.map((kind) => contenders[kind].server?.stop()));
  }
  return contenders;
}

function cells(row: Row | undefined): string[] {
  const m = row?.measurement;
  if (!m) return ["n/a", "", "", ""];
  return [fmt.rps(m.rps) + (m.failures > 0 ? "!" : ""), fmt.ms(m.p50), fmt.ms(m.p99), fmt.mb(row.rss ?? null)];
}

/** a ÷ b, marked against a target when there is one. */
function ratio(a: number | null | undefined, b: number | null | undefined, target?: number): string {
  if (!a || !b) return "n/a";
  const value = a / b;
  return target === undefined ? fmt.ratio(value) : `${fmt.ratio(value)} ${value >= target ? "✓" : "✗"}`;
}

const rps = (row: Row | undefined) => row?.measurement?.rps;
const cpu = (row: Row | undefined) => row?.cpu;

function report(runtime: Runtime, outcomes: Record<Kind, Contender>): boolean {
  const { everest, hand, floor } = outcomes;
  const rows = workloads.map((workload) => {
    const [e, h, f] = [everest, hand, floor].map((o) => o.rows.get(workload.name));
    const item = workload.name === "GET item by _id";
    return [workload.name, ...cells(e), ...cells(h), ...cells(f), ratio(rps(e), rps(h), targetHand(workload.name, runtime.name)), ratio(rps(e), rps(f), item ? TARGET_FLOOR_ITEM : undefined)];
  });
  // The same comparison by server CPU per request: what throughput would be on a core of its own,
  // and far steadier than requests/s on a machine whose other work takes turns on the same core.
  const efficiency = workloads.map((workload) => {
    const [e, h, f] = [everest, hand, floor].map((o) => o.rows.get(workload.name));
    const item = workload.name === "GET item by _id";
    const us = (row: Row | undefined) => (cpu(row) ? fmt.rps(cpu(row)!) : "n/a");
    return [workload.name, us(e), us(h), us(f), ratio(cpu(h), cpu(e), targetHand(workload.name, runtime.name)), ratio(cpu(f), cpu(e), item ? TARGET_FLOOR_ITEM : undefined)];
  });
  const header = ["workload", "everest req/s", "p50 ms", "p99 ms", "RSS MB", "hand req/s", "p50 ms", "p99 ms", "RSS MB", "floor req/s", "p50 ms", "p99 ms", "RSS MB", "÷hand", "÷floor"];
  const { warmup, duration } = plan(runtime);
  console.log(`\n### ${runtime.name} (${warmup}s warm-up + ${duration}s per measurement)\n`);
  console.log(table(header, rows));
  console.log(`\nServer CPU time per request (µs; ratios inverted, so higher is better for everest as above):\n`);
  console.log(table(["workload", "everest", "hand", "floor", "÷hand", "÷floor"], efficiency));
  const notes: string[] = [];
  for (const [kind, outcome] of Object.entries(outcomes)) {
    if (outcome.error) notes.push(`${kind}: n/a — ${outcome.error}`);
    for (const [name, row] of outcome.rows) {
      if (row.error) notes.push(`${kind}, ${name}: n/a — ${row.error}`);
      if (row.measurement && row.measurement.failures > 0) notes.push(`${kind}, ${name}: ! failed responses (${row.measurement.statuses})`);
    }
  }
  if (notes.length) console.log(`\n${notes.map((note) => `- ${note}`).join("\n")}`);
  return [...rows, ...efficiency].every((row) => !row.slice(-2).some((cell) => cell.endsWith("✗") || cell === "n/a"));
}

console.log(`## HTTP: ${DOCUMENTS.toLocaleString("en-US")} documents, ${CONNECTIONS} connections, everest on ${database}`);
console.log(cores ? `server on core ${cores.server}, load generator on core ${cores.generator}` : "not pinned (fewer than two cores or no taskset)");
let held = true;
for (const runtime of runtimes().filter((r) => !only || only.includes(r.name))) held = report(runtime, await compare(runtime)) && held;
console.log(`\ntargets (everest ÷ hand-written as marked per workload and runtime, GET item ≥ ${TARGET_FLOOR_ITEM}× floor; by requests/s and by CPU per request): ${held ? "hold" : "NOT all held"}`);
