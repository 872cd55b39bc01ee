// One server under one workload, its CPU per request split into user and system (kernel) time,
// window by window: the quick look between full runs (bench/README.md, "A fifth pass").
//   npx tsx bench/lib/probe.ts <node|bun|deno> <everest|lean|hand|floor> "<workload name prefix>" [server args…] [--windows 5]
// Servers, pinning, seeding and traffic as in http.ts; a 3 s warm-up, then windows of 1.5 s.
// The floor is sent the workload's requests (floorTraffic), answered with 280 bytes.
import { load } from "./load.ts";
import { pinning, pinSelf, runtimes, startServer } from "./proc.ts";
import { floorTraffic, sampleDocs, WORKLOADS } from "./workloads.ts";

const [runtimeName, kind, workloadName, ...rest] = process.argv.slice(2);
const windowsAt = rest.indexOf("--windows");
const windows = windowsAt >= 0 ? Number(rest.splice(windowsAt, 2)[1]) : 5;
const runtime = runtimes().find((r) => r.name === runtimeName);
const workload = WORKLOADS.find((w) => workloadName && w.name.startsWith(workloadName));
if (!runtime || !kind || !workload) {
  throw new Error(`usage: probe.ts <${runtimes().map((r) => r.name).join("|")}> <kind> "<${WORKLOADS.map((w) => w.name).join(" | ")}>" [server args…]`);
}

const cores = pinning();
if (cores) pinSelf(cores.generator);
const floor = kind === "floor";
const server = await startServer(runtime, [kind, ...(floor ? [] : ["--documents", "10000"]), ...rest], cores?.server ?? null);
try {
  // The floor is sent one of the workload's requests, made from a stand-in document.
  const everestTraffic = workload.traffic(floor ? [{ id: "0".repeat(24), lastname: "p0", etag: "0".repeat(40) }] : await sampleDocs(server.url));
  const traffic = floor ? floorTraffic(everestTraffic.next(), 280) : everestTraffic;
  await load(server.url, traffic, { connections: 10, duration: 3 });
  await traffic.settle?.(server.url);
  const figures: string[] = [];
  for (let i = 0; i < windows; i++) {
    const before = server.cpuTimes();
    const measured = await load(server.url, traffic, { connections: 10, duration: 1.5 });
    const after = server.cpuTimes();
    await traffic.settle?.(server.url);
    if (!before || !after) throw new Error("the server's CPU time is not readable here (/proc)");
    const per = (seconds: number) => ((seconds * 1e6) / (measured.requests * (workload.batch ?? 1))).toFixed(1);
    figures.push(`${per(after.user + after.system - before.user - before.system)} (${per(after.user - before.user)} + ${per(after.system - before.system)})`);
  }
  console.log(`${runtime.name} ${kind} ${rest.join(" ")} · ${workload.name} · CPU µs per ${workload.batch ? "document" : "request"} (user + system):\n  ${figures.join("\n  ")}`);
} finally {
  await server.stop();
}
