// `npm run bench`: every bench module in bench/ (each top-level .ts file but this one), one
// after the other as child processes, under a header naming the machine. Arguments (`--quick`)
// are passed on to each module.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { availableParallelism, cpus } from "node:os";
import { runtimes, ROOT } from "./lib/proc.ts";

/** These first, in this order; any other module after them, by name. */
const FIRST = ["http.ts", "scale.ts"];

const args = process.argv.slice(2);
const modules = readdirSync(`${ROOT}bench`)
  .filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts") && name !== "run.ts")
  .sort((a, b) => (FIRST.indexOf(a) + 1 || FIRST.length + 1) - (FIRST.indexOf(b) + 1 || FIRST.length + 1) || a.localeCompare(b));

/** `1.4.5` from `bun --version`, `2.9.6` from `deno --version`'s "deno 2.9.6 (stable, …)". */
function version(name: string, binary: string): string {
  const run = spawnSync(binary, ["--version"], { encoding: "utf8" });
  return run.status === 0 ? (run.stdout.trim().replace(`${name} `, "").split(/\s/)[0] ?? "?") : "?";
}

const model = cpus()[0]?.model ?? "unknown CPU";
const versions = runtimes().map((runtime) => `${runtime.name} ${runtime.name === "node" ? process.version : version(runtime.name, runtime.command[0]!)}`);
console.log(`# everest bench${args.length ? ` (${args.join(" ")})` : ""}`);
console.log(`${availableParallelism()} cores (nproc), ${model}; ${versions.join(", ")}; ${new Date().toISOString().slice(0, 16)}Z\n`);

const started = performance.now();
let failed = 0;
for (const module of modules) {
  const run = spawnSync(process.execPath, ["--import", "tsx", `bench/${module}`, ...args], { cwd: ROOT, stdio: "inherit" });
  if (run.status !== 0) {
    failed++;
    console.log(`\n${module} failed (${run.signal ?? `exit ${run.status}`})`);
  }
  console.log();
}
console.log(`bench finished in ${((performance.now() - started) / 1000).toFixed(0)} s${failed ? `, ${failed} module(s) failed` : ""}`);
if (failed) process.exitCode = 1;
