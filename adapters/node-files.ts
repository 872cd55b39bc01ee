// FileAccess for Node (and runtimes with node:fs): what the memory driver's journal needs to
// be durable. Every append and replacement is fsynced before it resolves, and so is the
// directory entry of a file this process created or renamed into place, since a crash could
// otherwise lose the file itself.
import { randomBytes } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import type { FileAccess } from "../src/drivers/types.ts";

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

export class NodeFileAccess implements FileAccess {
  /** Files whose directory entry is known to be durable. */
  private readonly settled = new Set<string>();

  async readText(path: string): Promise<string | null> {
    try {
      return await readFile(path, "utf8");
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

  async replaceAtomically(path: string, text: string): Promise<void> {
    const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      const handle = await open(temp, "wx");
      try {
        await handle.writeFile(text, "utf8");
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await syncDirectory(path);
    this.settled.add(path);
  }
}
