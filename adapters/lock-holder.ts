// Who holds a journal: the record its lock file keeps (adapters/file-lock.ts), and whether the
// process a record names still runs. A record matters only where the kernel lock this process
// takes cannot see the holder's (a Node holder's socket from Deno, a Deno holder's flock from
// Node), so the check must be exact where it can be: on Linux, /proc tells a live process from a
// zombie (the state Z its parent has not reaped: `kill(pid, 0)` still succeeds on it, which let a
// dead server block every restart), and the start time recorded with the pid tells it from an
// unrelated process that reuses the pid. A process of another pid namespace (another container)
// cannot be seen at all, so its record counts as stale (docs/deploy.md).
import { readFileSync, readlinkSync } from "node:fs";

/** How the holder excludes others: an advisory file lock, a Linux abstract socket, or its record alone. */
export type LockKind = "flock" | "socket" | "record";

export interface Holder {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/PID/stat field 22); null without /proc. */
  start: string | null;
  /** /proc/sys/kernel/random/boot_id: a record from before a reboot names no live process. */
  boot: string | null;
  /** /proc/self/ns/pid and /proc/self/ns/net, which name the container the process runs in. */
  pidns: string | null;
  netns: string | null;
  lock: LockKind;
}

export type Liveness = "alive" | "gone" | "unknown";

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

function readLink(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

interface ProcStat {
  state: string;
  start: string;
}

/** Fields 3 (state) and 22 (start time) of /proc/PID/stat; the name in field 2 may hold spaces and parentheses. */
function parseStat(text: string): ProcStat | null {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return fields.length > 19 ? { state: fields[0]!, start: fields[19]! } : null;
}

/** This process, as its record names it. */
export function thisProcess(lock: LockKind): Holder {
  const stat = readText("/proc/self/stat");
  return {
    pid: process.pid,
    start: stat ? (parseStat(stat)?.start ?? null) : null,
    boot: readText("/proc/sys/kernel/random/boot_id")?.trim() ?? null,
    pidns: readLink("/proc/self/ns/pid"),
    netns: readLink("/proc/self/ns/net"),
    lock,
  };
}

export function formatHolder(holder: Holder): string {
  return `${JSON.stringify(holder)}\n`;
}

/** The holder a lock file names; a bare pid is what everest wrote before records had more. Null: none. */
export function parseHolder(text: string): Holder | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return { pid: Number(trimmed), start: null, boot: null, pidns: null, netns: null, lock: "record" };
  try {
    const value = JSON.parse(trimmed) as Partial<Holder>;
    if (!Number.isInteger(value.pid) || value.pid! <= 0) return null;
    const text = (v: unknown) => (typeof v === "string" ? v : null);
    const lock = value.lock === "flock" || value.lock === "socket" ? value.lock : "record";
    return { pid: value.pid!, start: text(value.start), boot: text(value.boot), pidns: text(value.pidns), netns: text(value.netns), lock };
  } catch {
    // Half a record (its writer died mid-write) names nobody.
    return null;
  }
}

/**
 * Whether the holder still runs. Without /proc (macOS, Windows) only `kill(pid, 0)` can ask,
 * which takes a zombie or a reused pid for the holder; only ESRCH proves it gone, and where
 * this process may not even ask (Deno without --allow-run) the answer is unknown.
 */
export function liveness(holder: Holder, self: Holder): Liveness {
  if (holder.boot && self.boot && holder.boot !== self.boot) return "gone";
  if (holder.pidns && self.pidns && holder.pidns !== self.pidns) return "gone";
  if (self.start !== null) {
    let text: string;
    try {
      text = readFileSync(`/proc/${holder.pid}/stat`, "utf8");
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ENOENT" ? "gone" : signalled(holder.pid);
    }
    const stat = parseStat(text);
    if (!stat || stat.state === "Z" || stat.state === "X") return "gone";
    return holder.start !== null && holder.start !== stat.start ? "gone" : "alive";
  }
  return signalled(holder.pid);
}

function signalled(pid: number): Liveness {
  try {
    process.kill(pid, 0);
    return "alive";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return "gone";
    return code === "EPERM" ? "alive" : "unknown";
  }
}
