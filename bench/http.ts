// HTTP throughput: everest beside the floor and two hand-written equivalents (hand.ts, lean.ts),
// on every installed runtime. Each server is a child process pinned to its own core; autocannon
// runs here.
//   npx tsx bench/http.ts [--quick] [--runtimes node,bun,deno] [--workloads "GET item,POST"]
//                         [--db memory|sqlite|file] [--documents 10000]
// --db runs everest on that store, on a fresh file per server (sqlite: needs node:sqlite, so
// run the harness with Node ≥ 22.5 — servers on Node use the harness's own node).
import { freshStore } from "./lib/stores.ts";
import { differences } from "./lib/answers.ts";
import { load, probe, type Answer, type Measurement, type Step, type Traffic } from "./lib/load.ts";
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
/** The second pass, for latency under load: everest and the lean server only. */
const MANY = 64;
const DOCUMENTS = Number(listed("--documents")?.[0] ?? 10_000);
/** Documents the 10-connection reads cycle over (and PATCH edits); the 64-connection pass takes the next ones. */
const READ_SAMPLE = 50;
/**
 * Documents of the 64-connection pass: one per connection for PATCH, four times over, as each
 * load's end may leave one PATCH per connection unanswered, and its document's new ETag unknown
 * (the warm-up and three rounds).
 */
const MANY_SAMPLE = MANY * 4;

/** everest ÷ hand.ts per workload and runtime (issue 14): reads ≥ 0.9×, the collection page more, writes on Bun and Deno 0.8×. */
function targetHand(workload: string, runtime: Runtime["name"]): number {
  if (workload === "GET collection page") return runtime === "bun" ? 1.2 : 1.5;
  if ((workload === "POST one document" || workload === "PATCH with If-Match") && runtime !== "node") return 0.8;
  return 0.9;
}

/**
 * everest ÷ lean.ts per workload (issue 36): the collection page 1.5× (Bun 1.2×), PATCH 0.8×,
 * everything else 0.9× on every runtime (`where` has no line of its own there: the reads' 0.9×).
 */
function targetLean(workload: string, runtime: Runtime["name"]): number {
  if (workload === "GET collection page") return runtime === "bun" ? 1.2 : 1.5;
  if (workload === "PATCH with If-Match") return 0.8;
  return 0.9;
}

/** GET item ÷ the floor (issue 36; issue 14's line was 0.5). */
const TARGET_FLOOR_ITEM = 0.6;
/** p99 latency at 64 connections, everest ÷ lean, at most (issue 36). */
const TARGET_P99_LEAN = 1.5;

interface Row {
  measurement?: Measurement;
  rss?: number | null;
  /** Server CPU time (user + system) per completed request, in µs. */
  cpu?: number | null;
  /** Why there is no measurement. */
  error?: string;
  /** The first round's probe: the request and its answer (the floor replays the request with a body that size). */
  probed?: Answer & { step: Step };
}

const firstLines = (error: unknown, n = 3) => (error instanceof Error ? error.message : String(error)).split("\n").slice(0, n).join(" / ");

const cores = pinning();
if (cores) pinSelf(cores.generator);

const KINDS = ["everest", "hand", "lean", "floor"] as const;
type Kind = (typeof KINDS)[number];
/** The servers that hold the people data and are measured on every workload. */
const SERVING = ["everest", "hand", "lean"] as const;
/** The servers of the 64-connection pass. */
const MANY_KINDS = ["everest", "lean"] as const;

interface Contender {
  server?: Server;
  sample: SampleDoc[];
  /** Why this server could not be measured at all. */
  error?: string;
  rows: Map<string, Row>;
  /** The rows of the 64-connection pass. */
  many: Map<string, Row>;
  /**
   * Each workload's Traffic per pass, kept from the warm-up to the measurement: a PATCH that a
   * load's end left unanswered took its document's new ETag with it, and only the Traffic that
   * lent the document knows not to send it again. The passes edit different documents.
   */
  traffic: Map<Workload, Traffic>;
  manyTraffic: Map<Workload, Traffic>;
}

function trafficOf(contender: Contender, workload: Workload, connections = CONNECTIONS): Traffic {
  const few = connections === CONNECTIONS;
  const kept = few ? contender.traffic : contender.manyTraffic;
  let traffic = kept.get(workload);
  if (!traffic) kept.set(workload, (traffic = workload.traffic(few ? contender.sample.slice(0, READ_SAMPLE) : contender.sample.slice(READ_SAMPLE))));
  return traffic;
}

async function start(runtime: Runtime, kind: Kind): Promise<Contender> {
  const contender: Contender = { sample: [], rows: new Map(), many: new Map(), traffic: new Map(), manyTraffic: new Map() };
  try {
    const db = kind === "everest" ? ["--db", freshStore(database)] : [];
    // Seeding goes through HTTP: a million documents take minutes.
    contender.server = await startServer(runtime, [kind, "--documents", String(DOCUMENTS), ...db], cores?.server ?? null, Math.max(120_000, DOCUMENTS));
    if (kind !== "floor") contender.sample = await sampleDocs(contender.server.url, READ_SAMPLE + MANY_SAMPLE);
  } catch (error) {
    await contender.server?.stop();
    delete contender.server;
    contender.error = firstLines(error);
  }
  return contender;
}

/**
 * Probe (servers with data) and warm-up on the first round, then the measurement with the peak
 * RSS it caused.
 */
async function measure(contender: Contender, traffic: Traffic, round: number, probing: boolean, { warmup, duration }: Plan, longer = 1, connections = CONNECTIONS): Promise<Row> {
  const server = contender.server!;
  const row: Row = {};
  try {
    if (probing && round === 0) {
      const answer = await probe(server.url, traffic);
      if (answer.status >= 300) return { error: `${answer.status}: ${answer.body.slice(0, 120)}` };
      row.probed = answer;
    }
    if (round === 0) await load(server.url, traffic, { connections, duration: warmup });
    server.resetPeak();
    const cpuBefore = server.cpuSeconds();
    row.measurement = await load(server.url, traffic, { connections, duration: duration * longer });
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
 * All the servers run side by side and take turns workload by workload and round by round, so
 * background load on the machine hits them alike instead of whichever happened to run during it.
 * Each workload is measured at 10 connections (every server) and then at 64 (everest and the lean
 * server: latency under load).
 */
async function compare(runtime: Runtime): Promise<Record<Kind, Contender>> {
  const contenders = {} as Record<Kind, Contender>;
  const timing = plan(runtime);
  for (const kind of KINDS) contenders[kind] = await start(runtime, kind);
  try {
    for (const kind of SERVING) if (contenders[kind].server) await warmEveryWorkload(contenders[kind]);
    for (const workload of workloads) {
      const longer = workload.batch ? BULK_LONGER : 1;
      const rounds: Record<Kind, Row[]> = { everest: [], hand: [], lean: [], floor: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const kind of SERVING) {
          const contender = contenders[kind];
          if (contender.server) rounds[kind].push(await measure(contender, trafficOf(contender, workload), round, true, timing, longer));
        }
        // The floor answers the request everest got with a body the size of everest's answer (an equivalent's where everest had none).
        const probed = [rounds.everest[0], rounds.hand[0], rounds.lean[0]].find((row) => row?.probed)?.probed;
        if (contenders.floor.server) {
          rounds.floor.push(probed ? await measure(contenders.floor, floorTraffic(probed.step, probed.bytes), round, false, timing) : { error: "no answer to match" });
        }
      }
      for (const kind of KINDS) if (rounds[kind].length) contenders[kind].rows.set(workload.name, combine(rounds[kind]));
      const many: Record<(typeof MANY_KINDS)[number], Row[]> = { everest: [], lean: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const kind of MANY_KINDS) {
          const contender = contenders[kind];
          if (contender.server) many[kind].push(await measure(contender, trafficOf(contender, workload, MANY), round, false, timing, longer, MANY));
        }
      }
      for (const kind of MANY_KINDS) if (many[kind].length) contenders[kind].many.set(workload.name, combine(many[kind]));
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

/** a ÷ b, marked against a target when there is one (`atMost`: a ratio that must stay below it). */
function ratio(a: number | null | undefined, b: number | null | undefined, target?: number, atMost = false): string {
  if (!a || !b) return "n/a";
  const value = a / b;
  if (target === undefined) return fmt.ratio(value);
  return `${fmt.ratio(value)} ${(atMost ? value <= target : value >= target) ? "✓" : "✗"}`;
}

const rps = (row: Row | undefined) => row?.measurement?.rps;
const cpu = (row: Row | undefined) => row?.cpu;
const p99 = (row: Row | undefined) => row?.measurement?.p99;
const missed = (cells: string[]) => cells.some((cell) => cell.endsWith("✗") || cell === "n/a");

/** Whether each set of targets held on this runtime: issue 14's against hand.ts, issue 36's against lean.ts and the floor. */
interface Verdict {
  hand: boolean;
  lean: boolean;
}

function report(runtime: Runtime, outcomes: Record<Kind, Contender>): Verdict {
  const { everest, lean } = outcomes;
  const name = runtime.name;
  const rowsOf = (workload: Workload) => KINDS.map((kind) => outcomes[kind].rows.get(workload.name));
  const floorTarget = (workload: Workload) => (workload.name === "GET item by _id" ? TARGET_FLOOR_ITEM : undefined);
  const throughput = workloads.map((workload) => {
    const [e, h, l, f] = rowsOf(workload);
    const marks = [ratio(rps(e), rps(h), targetHand(workload.name, name)), ratio(rps(e), rps(l), targetLean(workload.name, name)), ratio(rps(e), rps(f), floorTarget(workload))];
    return [workload.name, ...cells(e), ...cells(h), ...cells(l), ...cells(f), ...marks];
  });
  // The same comparison by server CPU per request: what throughput would be on a core of its own,
  // and far steadier than requests/s on a machine whose other work takes turns on the same core.
  const efficiency = workloads.map((workload) => {
    const [e, h, l, f] = rowsOf(workload);
    const us = (row: Row | undefined) => (cpu(row) ? fmt.rps(cpu(row)!) : "n/a");
    const marks = [ratio(cpu(h), cpu(e), targetHand(workload.name, name)), ratio(cpu(l), cpu(e), targetLean(workload.name, name)), ratio(cpu(f), cpu(e), floorTarget(workload))];
    return [workload.name, us(e), us(h), us(l), us(f), ...marks];
  });
  const latency = workloads.map((workload) => {
    const [e, l] = [everest.many.get(workload.name), lean.many.get(workload.name)];
    return [workload.name, ...cells(e).slice(0, 3), ...cells(l).slice(0, 3), ratio(p99(e), p99(l), TARGET_P99_LEAN, true)];
  });
  const server = (kind: string) => [`${kind} req/s`, "p50 ms", "p99 ms", "RSS MB"];
  const { warmup, duration } = plan(runtime);
  console.log(`\n### ${name} (${warmup}s warm-up + ${duration}s per measurement, ${ROUNDS} rounds, medians)\n`);
  console.log(table(["workload", ...server("everest"), ...server("hand"), ...server("lean"), ...server("floor"), "÷hand", "÷lean", "÷floor"], throughput));
  console.log(`\nServer CPU time per request (µs; ratios inverted, so higher is better for everest as above):\n`);
  console.log(table(["workload", "everest", "hand", "lean", "floor", "÷hand", "÷lean", "÷floor"], efficiency));
  console.log(`\n${MANY} connections, everest and lean (p99 everest ÷ lean, lower is better, at most ${TARGET_P99_LEAN}×):\n`);
  console.log(table(["workload", ...server("everest").slice(0, 3), ...server("lean").slice(0, 3), "p99 ÷lean"], latency));
  const notes: string[] = [];
  for (const [kind, outcome] of Object.entries(outcomes)) {
    if (outcome.error) notes.push(`${kind}: n/a — ${outcome.error}`);
    for (const [pass, rows] of [["", outcome.rows], [` at ${MANY} connections`, outcome.many]] as const) {
      for (const [workload, row] of rows) {
        if (row.error) notes.push(`${kind}, ${workload}${pass}: n/a — ${row.error}`);
        if (row.measurement && row.measurement.failures > 0) notes.push(`${kind}, ${workload}${pass}: ! failed responses (${row.measurement.statuses})`);
      }
    }
  }
  const reference = (workload: string) => everest.rows.get(workload)?.probed;
  for (const kind of ["hand", "lean"] as const) {
    for (const [workload, row] of outcomes[kind].rows) {
      const [ours, theirs] = [reference(workload), row.probed];
      if (ours && theirs) for (const difference of differences(ours, theirs)) notes.push(`${kind}, ${workload}: answers differ from everest's: ${difference}`);
    }
  }
  if (notes.length) console.log(`\n${notes.map((note) => `- ${note}`).join("\n")}`);
  const byCell = (index: number) => [...throughput, ...efficiency].every((row) => !missed([row.at(index)!]));
  return { hand: byCell(-3), lean: byCell(-2) && byCell(-1) && latency.every((row) => !missed(row.slice(-1))) };
}

console.log(`## HTTP: ${DOCUMENTS.toLocaleString("en-US")} documents, ${CONNECTIONS} connections (and ${MANY}), everest on ${database}`);
console.log(cores ? `server on core ${cores.server}, load generator on core ${cores.generator}` : "not pinned (fewer than two cores or no taskset)");
const held: Verdict = { hand: true, lean: true };
for (const runtime of runtimes().filter((r) => !only || only.includes(r.name))) {
  const verdict = report(runtime, await compare(runtime));
  held.hand &&= verdict.hand;
  held.lean &&= verdict.lean;
}
const said = (ok: boolean) => (ok ? "hold" : "NOT all held");
console.log(`\ntargets, by requests/s and by CPU per request:`);
console.log(`- issue 14, everest ÷ hand as marked per workload and runtime: ${said(held.hand)}`);
console.log(`- issue 36, everest ÷ lean as marked, GET item ≥ ${TARGET_FLOOR_ITEM}× floor, p99 at ${MANY} connections ≤ ${TARGET_P99_LEAN}× lean: ${said(held.lean)}`);
