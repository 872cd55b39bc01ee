// FileAccess for Node (and runtimes with node:fs): what the memory driver's journal needs to
// be durable. Every append, truncation and replacement is fsynced before it resolves, and so is
// the directory entry of a file this process created or renamed into place, since a crash could
// otherwise lose the file itself. A journal is claimed with a lock file beside it naming the
// owning process, so a second process cannot interleave its lines with the first one's.
import { randomBytes } from "node:crypto";
import { unlinkSync } from "node:fs";
import { link, open, readdir, readFile, rename, rm, type FileHandle } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { FileLockedError, type FileAccess, type FileLock, type FileReplacement } from "../src/drivers/types.ts";

const CHUNK = 1 << 20;

async function syncDirectory(path: string): Promise<void> {
  let handle;
  try {
    handle = await open(dirname(path), "r");
    await handle.sync();
  } catch (error) {
    // Some platforms (Windows) cannot open or fsync a directory; the rename is as durable as they allow.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EPERM" && code !== "EINVAL" && code !== "EACCES") throw error;
  } finally {
    await handle?.close();
  }
}

async function* chunks(handle: FileHandle): AsyncGenerator<Uint8Array> {
  try {
    for (;;) {
      // A fresh buffer per read: the reader may keep a chunk's tail while it waits for the next.
      const buffer = new Uint8Array(CHUNK);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** Lock files this process holds, removed when it exits however it exits short of a kill. */
const held = new Set<string>();
let exitHook = false;

/**
 * Whether a process with this pid exists, or null when this process may not ask. Only ESRCH
 * proves it gone (EPERM: it exists but is someone else's). Deno refuses the signal, and /proc
 * too, without --allow-run; taking that as "gone" let a second server steal a live lock.
 */
function isAlive(pid: number): boolean | null {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return false;
    return code === "EPERM" ? true : null;
  }
}

/** The pid a lock file names, or null when it names none (then nobody can be holding it). */
async function lockOwner(lockPath: string): Promise<number | null> {
  try {
    const pid = Number((await readFile(lockPath, "utf8")).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

export class NodeFileAccess implements FileAccess {
  /** Files whose directory entry is known to be durable. */
  private readonly settled = new Set<string>();

  async read(path: string): Promise<AsyncIterable<Uint8Array> | null> {
    try {
      return chunks(await open(path, "r"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  async append(path: string, text: string): Promise<void> {
    const handle = await open(path, "a");
    try {
      await handle.appendFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (!this.settled.has(path)) {
      await syncDirectory(path);
      this.settled.add(path);
    }
  }

  async truncate(path: string, length: number): Promise<void> {
    const handle = await open(path, "r+");
    try {
      await handle.truncate(length);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async replacement(path: string): Promise<FileReplacement> {
    const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
    const handle = await open(temp, "wx");
    let closed = false;
    const close = async () => {
      if (!closed) await handle.close();
      closed = true;
    };
    return {
      write: (text) => handle.writeFile(text, "utf8"),
      commit: async () => {
        try {
          await handle.sync();
          await close();
          await rename(temp, path);
        } catch (error) {
          await close().catch(() => undefined);
          await rm(temp, { force: true });
          throw error;
        }
        await syncDirectory(path);
        this.settled.add(path);
      },
      discard: async () => {
        await close().catch(() => undefined);
        await rm(temp, { force: true });
      },
    };
  }

  /**
   * `PATH.lock` holds the owner's pid; it is created whole (written aside, then hard-linked into
   * place) so nobody ever reads it half-written. A lock whose process is gone, or that names
   * this very process without being held by it (a pid reused after a crash, as a container's
   * pid 1 is), is stale and taken over. Replacement files a crash left beside the journal are
   * removed once the lock is ours, since only the lock's owner writes them.
   */
  async lock(path: string): Promise<FileLock> {
    const lockPath = `${resolve(path)}.lock`;
    if (held.has(lockPath)) throw new FileLockedError(`the journal ${path} is already open in this process`);
    const aside = `${lockPath}.${randomBytes(6).toString("hex")}`;
    const handle = await open(aside, "wx");
    try {
      await handle.writeFile(`${process.pid}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await link(aside, lockPath);
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 3) throw error;
        }
        const owner = await lockOwner(lockPath);
        const alive = owner === null || owner === process.pid ? false : isAlive(owner);
        if (alive !== false) {
          throw new FileLockedError(
            `the journal ${path} is in use by process ${owner} (lock file ${lockPath}): stop that process first, or use another file. ` +
              (alive === null ? `This process may not check whether process ${owner} still runs (on Deno, run with --allow-run); if` : `If`) +
              ` no everest process uses the journal, delete the lock file.`,
          );
        }
        await rm(lockPath, { force: true });
      }
    } finally {
      await rm(aside, { force: true });
    }
    await syncDirectory(lockPath);
    held.add(lockPath);
    if (!exitHook) {
      exitHook = true;
      process.on("exit", () => {
        for (const lock of held) rmSyncQuietly(lock);
      });
    }
    await this.removeLeftovers(path);
    return {
      release: async () => {
        if (!held.delete(lockPath)) return;
        await rm(lockPath, { force: true });
      },
    };
  }

  private async removeLeftovers(path: string): Promise<void> {
    const name = basename(path);
    const leftover = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.[0-9a-f]{12}\\.tmp$`);
    const entries = await readdir(dirname(path)).catch(() => [] as string[]);
    await Promise.all(entries.filter((entry) => leftover.test(entry)).map((entry) => rm(join(dirname(path), entry), { force: true })));
  }
}

function rmSyncQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone, or the directory went away: either way nothing holds the journal now.
  }
}
