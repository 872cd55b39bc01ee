// FileAccess for Node (and runtimes with node:fs): what the memory driver's journal needs to
// be durable. Every append, truncation and replacement is fsynced before it resolves, and so is
// the directory entry of a file this process created or renamed into place, since a crash could
// otherwise lose the file itself. A journal is claimed with a lock (adapters/file-lock.ts), so a
// second process cannot interleave its lines with the first one's.
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, readdir, rename, rm, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { FileAccess, FileLock, FileReplacement } from "../src/drivers/types.ts";
import { lockJournal, realJournalPath } from "./file-lock.ts";

const CHUNK = 1 << 20;

/** Appending to a file that must already be there: a journal deleted under the server is not made anew. */
const APPEND_EXISTING = constants.O_WRONLY | constants.O_APPEND;

/** Device and inode: which file a path names. Null where the platform gives no inode. */
function identity(stats: { dev: number; ino: number }): string | null {
  return stats.ino ? `${stats.dev}:${stats.ino}` : null;
}

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

export class NodeFileAccess implements FileAccess {
  /** Files whose directory entry is known to be durable. */
  private readonly settled = new Set<string>();
  /**
   * The file each path named when this process read, created or replaced it. A journal deleted
   * or replaced while the server runs (by hand, a clean-up job, a restore) no longer holds what
   * the server has acknowledged: appending to whatever the path names now would store writes a
   * restart cannot rebuild, or lines that refer to documents the new file never had.
   */
  private readonly identities = new Map<string, string | null>();

  async read(path: string): Promise<AsyncIterable<Uint8Array> | null> {
    let handle: FileHandle;
    try {
      handle = await open(path, "r");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    this.identities.set(path, identity(await handle.stat()));
    return chunks(handle);
  }

  async append(path: string, text: string): Promise<void> {
    const known = this.identities.has(path);
    const handle = await open(path, known ? APPEND_EXISTING : "a").catch((error: NodeJS.ErrnoException) => {
      throw error.code === "ENOENT" ? new Error(`${path} is gone: it was deleted or moved while the server ran, so it no longer holds the acknowledged writes; restart to replay what is left, or restore it`) : error;
    });
    let size: number | undefined;
    try {
      const stats = await handle.stat();
      if (!known) this.identities.set(path, identity(stats));
      else if (identity(stats) !== this.identities.get(path)) {
        throw new Error(`${path} was replaced by another file while the server ran; nothing was appended to it, and it does not hold the writes acknowledged before`);
      }
      size = stats.size;
      await handle.appendFile(text, "utf8");
      await handle.sync();
    } catch (error) {
      // A full disk writes part of the text, and a failed sync may keep it all: lines of writes
      // about to be refused, which a restart would replay. Cut back to what was there.
      if (size !== undefined) await handle.truncate(size).then(() => handle.sync()).catch(() => undefined);
      throw error;
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

  async replacement(given: string): Promise<FileReplacement> {
    // Beside the file itself: renamed over a link to it, it would leave the file behind, stale.
    const path = await realJournalPath(given);
    const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
    const handle = await open(temp, "wx");
    const renamed = identity(await handle.stat());
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
        this.identities.set(given, renamed);
      },
      discard: async () => {
        await close().catch(() => undefined);
        await rm(temp, { force: true });
      },
    };
  }

  /**
   * The journal's lock (adapters/file-lock.ts). Replacement files a crash left beside the
   * journal are removed once the lock is ours, since only the lock's owner writes them.
   */
  async lock(path: string): Promise<FileLock> {
    const lock = await lockJournal(path);
    await this.removeLeftovers(await realJournalPath(path));
    return lock;
  }

  private async removeLeftovers(path: string): Promise<void> {
    const name = basename(path);
    const leftover = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.[0-9a-f]{12}\\.tmp$`);
    const entries = await readdir(dirname(path)).catch(() => [] as string[]);
    await Promise.all(entries.filter((entry) => leftover.test(entry)).map((entry) => rm(join(dirname(path), entry), { force: true })));
  }
}
