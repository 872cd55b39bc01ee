// One writer per journal: `PATH.lock` beside it, held with the runtime's kernel lock
// (adapters/kernel-lock.ts) and naming its holder (adapters/lock-holder.ts), which also listens
// on a beacon (adapters/lock-beacon.ts). The kernel lock decides between servers of one runtime;
// where the holder's lock is one this process cannot see (a Node server and a Deno server on one
// journal, or two Node servers in two containers), its beacon decides, and without a beacon its
// record. The file stays when the lock is released, emptied: removing it would let a server
// that opened it a moment before lock a file nobody else finds any more.
import { readFile, realpath, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { FileLockedError, type FileLock } from "../src/drivers/types.ts";
import { takeKernelLock, type KernelLock } from "./kernel-lock.ts";
import { listenBeacon, probeBeacon, type Beacon } from "./lock-beacon.ts";
import { formatHolder, liveness, parseHolder, thisProcess, type Holder, type Liveness } from "./lock-holder.ts";

/** Lock files this process holds: a second claim from within is refused, not deadlocked. */
const held = new Set<string>();

async function recorded(lockPath: string): Promise<Holder | null> {
  try {
    return parseHolder(await readFile(lockPath, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Whether the recorded holder still holds the journal although this process got the kernel
 * lock: only a holder whose lock this one cannot see can, so a flock holder is gone once we hold
 * the flock, and a socket holder once we hold the socket in the same network namespace. A live
 * beacon without a record is a holder between its beacon and its record.
 */
async function stillHeld(holder: Holder | null, self: Holder, beaconPath: string): Promise<Liveness> {
  if (holder?.pid === self.pid) return "gone";
  if (holder && holder.lock === self.lock && (holder.lock === "flock" || (holder.lock === "socket" && holder.netns === self.netns))) return "gone";
  const probed = await probeBeacon(beaconPath);
  if (probed !== "absent") return probed;
  return holder ? liveness(holder, self) : "gone";
}

function refusal(path: string, lockPath: string, holder: Holder | null, state: Liveness): FileLockedError {
  const who = holder ? `process ${holder.pid}` : "another process";
  const unknown =
    state === "unknown"
      ? ` This process may not check whether ${who} still runs (on Deno, run with --allow-run); if no everest process uses the journal, empty or delete the lock file.`
      : "";
  return new FileLockedError(`the journal ${path} is in use by ${who} (lock file ${lockPath}): stop that process first, or use another file.${unknown}`);
}

/**
 * The file a journal path names, through symbolic links (of the file and of its directories):
 * a journal opened as `data/app.jsonl` and as a link to it must take one lock, and a
 * compaction must replace the file, not the link. A file not there yet is named by its
 * directory's real path. Hard links are not followed (docs/deploy.md).
 */
export async function realJournalPath(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return join(await realpath(dirname(path)).catch(() => resolve(dirname(path))), basename(path));
  }
}

/** Makes this process the journal's only writer, or throws FileLockedError naming the one that is. */
export async function lockJournal(path: string): Promise<FileLock> {
  const lockPath = `${await realJournalPath(path)}.lock`;
  if (held.has(lockPath)) throw new FileLockedError(`the journal ${path} is already open in this process`);
  held.add(lockPath);
  const beaconPath = `${lockPath}.sock`;
  let kernel: KernelLock | null = null;
  let beacon: Beacon | null = null;
  try {
    kernel = await takeKernelLock(lockPath);
    if (!kernel) throw refusal(path, lockPath, await recorded(lockPath), "alive");
    const self = thisProcess(kernel.kind);
    const holder = await recorded(lockPath);
    const state = await stillHeld(holder, self, beaconPath);
    if (state !== "gone") throw refusal(path, lockPath, holder, state);
    beacon = await listenBeacon(beaconPath);
    await writeFile(lockPath, formatHolder(self));
  } catch (error) {
    await beacon?.close();
    kernel?.release();
    held.delete(lockPath);
    throw error;
  }
  const lock = kernel;
  const live = beacon;
  return {
    release: async () => {
      if (!held.delete(lockPath)) return;
      try {
        await live?.close();
        await writeFile(lockPath, "");
      } finally {
        lock.release();
      }
    },
  };
}
