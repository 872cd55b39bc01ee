// Server child processes: which runtimes are installed, CPU pinning, start/stop, and the peak
// resident memory of a process (Linux /proc; elsewhere unknown).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { buildPackage } from "./package.ts";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SERVER_ENTRY = "bench/lib/server.ts";

export interface Runtime {
  name: "node" | "bun" | "deno";
  /** The command line up to the script path. */
  command: string[];
}

function binary(name: string): string | null {
  const local = `${ROOT}node_modules/.bin/${name}`;
  if (existsSync(local)) return local;
  const found = spawnSync("which", [name], { encoding: "utf8" });
  return found.status === 0 ? found.stdout.trim() : null;
}

/** Node always (the harness runs on it); Bun and Deno where installed. */
export function runtimes(): Runtime[] {
  const list: Runtime[] = [{ name: "node", command: [process.execPath, "--import", "tsx"] }];
  const bun = binary("bun");
  if (bun) list.push({ name: "bun", command: [bun] });
  const deno = binary("deno");
  if (deno) list.push({ name: "deno", command: [deno, "run", "-A"] });
  return list;
}

/**
 * Cores for the server and the load generator, when there are two and taskset exists: the
 * server gets core 0 and this process (autocannon) core 1, so neither steals from the other.
 */
export function pinning(): { server: number; generator: number } | null {
  if (availableParallelism() < 2 || !binary("taskset")) return null;
  return { server: 0, generator: 1 };
}

/** Moves every thread of this process onto one core. */
export function pinSelf(core: number): void {
  spawnSync("taskset", ["-a", "-p", "-c", String(core), String(process.pid)], { stdio: "ignore" });
}

export interface Server {
  url: string;
  /** Forgets the peak so far, so the next peakRss() covers only what follows. */
  resetPeak(): void;
  /** Peak resident set since start or the last resetPeak(), in bytes; null where unknown. */
  peakRss(): number | null;
  /** CPU time the process has used (user + system), in seconds; null where unknown. */
  cpuSeconds(): number | null;
  /** The same in its two parts: the kernel's share is what the process's syscalls cost. */
  cpuTimes(): { user: number; system: number } | null;
  /** Resident set now, in bytes; null where unknown. */
  rss(): number | null;
  /**
   * Live heap: the server collects all its garbage and reports what is left (server.ts, on
   * SIGUSR2), in bytes; null if it does not answer within a few seconds.
   */
  heapAfterGc(): Promise<number | null>;
  stop(): Promise<void>;
}

export function resetPeak(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // Without /proc the peak is simply not reported.
  }
}

/** Resident set now (VmRSS), in bytes. */
export function currentRss(pid: number): number | null {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

export function peakRss(pid: number): number | null {
  try {
    const kb = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

/** Linux reports process times in clock ticks of 1/100 s (USER_HZ) on every common platform. */
const TICKS_PER_SECOND = 100;

/** CPU time a process has used in user and in system (kernel) mode, in seconds; null where unknown. */
export function cpuTimes(pid: number): { user: number; system: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name: state is the first, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { user: Number(fields[11]) / TICKS_PER_SECOND, system: Number(fields[12]) / TICKS_PER_SECOND };
  } catch {
    return null;
  }
}

export function cpuSeconds(pid: number): number | null {
  const times = cpuTimes(pid);
  return times && times.user + times.system;
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));

/** Signals the server to collect its garbage and waits for the `HEAP <bytes>` line it then prints. */
function reportedHeap(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    let text = "";
    const done = (bytes: number | null) => {
      clearTimeout(timer);
      child.stdout!.off("data", read);
      resolve(bytes);
    };
    const read = (chunk: string) => {
      text += chunk;
      const bytes = /HEAP (\d+)\n/.exec(text)?.[1];
      if (bytes) done(Number(bytes));
    };
    const timer = setTimeout(() => done(null), 10_000);
    child.stdout!.on("data", read);
    child.kill("SIGUSR2");
  });
}

/** Starts `server.ts <args>` on a runtime and waits for its READY line; rejects with its stderr if it dies first. */
export function startServer(runtime: Runtime, args: string[], core: number | null, timeoutMs = 120_000): Promise<Server> {
  // The servers serve everest as the package ships it (bench/lib/package.ts).
  buildPackage();
  const command = [...(core === null ? [] : ["taskset", "-c", String(core)]), ...runtime.command, SERVER_ENTRY, ...args];
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const pid = child.pid!;
  const stop = async () => {
    child.kill("SIGKILL");
    await exited(child);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${runtime.name} ${args[0]} did not start within ${timeoutMs / 1000}s\n${stderr}`));
    }, timeoutMs);
    let stdout = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const port = /READY (\d+)/.exec(stdout)?.[1];
      if (!port) return;
      clearTimeout(timer);
      child.stdout!.removeAllListeners("data").resume();
      const heapAfterGc = () => reportedHeap(child);
      resolve({ url: `http://127.0.0.1:${port}`, resetPeak: () => resetPeak(pid), peakRss: () => peakRss(pid), cpuSeconds: () => cpuSeconds(pid), cpuTimes: () => cpuTimes(pid), rss: () => currentRss(pid), heapAfterGc, stop });
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${runtime.name} ${args[0]} exited (${signal ?? code}) before it was ready\n${stderr.trim()}`));
    });
  });
}
