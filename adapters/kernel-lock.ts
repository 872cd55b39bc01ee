// The lock the kernel releases when its holder dies, however it dies and whether or not its
// parent reaps it (a dead process's descriptors are closed before it becomes a zombie), taken
// the way each runtime can:
// - Deno: an advisory lock on the lock file (FsFile.tryLock, flock(2));
// - Bun: the same flock(2), called in libc through bun:ffi;
// - Node, which has no file lock in its standard library: on Linux, a Unix socket bound in the
//   abstract namespace under a name made from the lock file's path. Binding is atomic and the
//   name is freed with the socket, so it is as exact as flock — but only within one network
//   namespace, where a flock reaches every process that shares the file system. Elsewhere
//   (macOS, Windows) Node keeps the record alone (adapters/lock-holder.ts).
// Why not a pid file for all: a pid outlives its process as a zombie and is reused by others,
// so deciding from it takes /proc, and a holder in another container is out of sight.
import { createHash } from "node:crypto";
import { closeSync, constants, openSync, realpathSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { basename, dirname, join } from "node:path";
import type { LockKind } from "./lock-holder.ts";

export interface KernelLock {
  readonly kind: LockKind;
  release(): void;
}

interface DenoFile {
  tryLock(exclusive?: boolean): Promise<boolean>;
  close(): void;
}
interface DenoFiles {
  open(path: string, options: { read: boolean; write: boolean; create: boolean }): Promise<DenoFile>;
}

interface BunLibc {
  symbols: { flock(fd: number, operation: number): number; errno(): number };
  close(): void;
}

const LOCK_EX = 2;
const LOCK_NB = 4;
/** EWOULDBLOCK on Linux and on macOS. */
const WOULD_BLOCK = new Set([11, 35]);

/**
 * Takes this runtime's kernel lock for `lockPath` (created if missing); null when another live
 * process holds it. The record-only lock is always taken: it excludes nobody by itself.
 */
export async function takeKernelLock(lockPath: string): Promise<KernelLock | null> {
  const deno = (globalThis as { Deno?: DenoFiles }).Deno;
  if (deno) return denoLock(deno, lockPath);
  if ((globalThis as { Bun?: unknown }).Bun) {
    const libc = await (bunLibcLoaded ??= bunLibc());
    if (libc) return bunLock(libc, lockPath);
  } else if (process.platform === "linux") return socketLock(lockPath);
  return { kind: "record", release() {} };
}

async function denoLock(deno: DenoFiles, lockPath: string): Promise<KernelLock | null> {
  const file = await deno.open(lockPath, { read: true, write: true, create: true });
  if (!(await file.tryLock(true))) {
    file.close();
    return null;
  }
  return { kind: "flock", release: () => file.close() };
}

function bunLock(libc: BunLibc, lockPath: string): KernelLock | null {
  const fd = openSync(lockPath, constants.O_RDWR | constants.O_CREAT, 0o644);
  if (libc.symbols.flock(fd, LOCK_EX | LOCK_NB) === 0) return { kind: "flock", release: () => closeSync(fd) };
  const errno = libc.symbols.errno();
  closeSync(fd);
  if (WOULD_BLOCK.has(errno)) return null;
  throw new Error(`flock(${lockPath}) failed with errno ${errno}`);
}

let bunLibcLoaded: Promise<BunLibc | null> | undefined;

/** libc's flock and errno through bun:ffi; null where no libc this knows of loads (Windows). */
async function bunLibc(): Promise<BunLibc | null> {
  // A variable specifier: only Bun has the module, and only Bun runs this.
  const specifier = "bun:ffi";
  const ffi = (await import(specifier)) as {
    dlopen(path: string, symbols: Record<string, { args: string[]; returns: string }>): { symbols: Record<string, (...args: number[]) => number>; close(): void };
    read: { i32(pointer: number): number };
  };
  const libraries: Array<[string, string]> = [
    ["libc.so.6", "__errno_location"],
    [`libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`, "__errno_location"],
    ["libSystem.B.dylib", "__error"],
  ];
  for (const [path, errnoSymbol] of libraries) {
    try {
      const lib = ffi.dlopen(path, { flock: { args: ["i32", "i32"], returns: "i32" }, [errnoSymbol]: { args: [], returns: "ptr" } });
      const errnoAt = lib.symbols[errnoSymbol]!;
      return { symbols: { flock: lib.symbols.flock!, errno: () => ffi.read.i32(errnoAt()) }, close: () => lib.close() };
    } catch {
      // Not this platform's libc: try the next.
    }
  }
  return null;
}

/** The abstract socket's name: the lock file's real path, hashed to fit, so two spellings of one path meet. */
function socketName(lockPath: string): string {
  let real: string;
  try {
    real = join(realpathSync(dirname(lockPath)), basename(lockPath));
  } catch {
    real = lockPath;
  }
  // Padded with NULs to the whole of sun_path (108 bytes on Linux): Node 20 binds an abstract
  // name so padded, Node 22 and later bind it at its own length, a name of its own, so each saw
  // no lock the other held and two servers wrote one journal. Padded, every version binds one name.
  return `\0everest-lock-${createHash("sha256").update(real).digest("hex").slice(0, 48)}`.padEnd(SUN_PATH, "\0");
}

/** The size of a Unix socket address's path on Linux. */
const SUN_PATH = 108;

function socketLock(lockPath: string): Promise<KernelLock | null> {
  const server: Server = createServer((socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => (error.code === "EADDRINUSE" ? resolve(null) : reject(error)));
    server.listen({ path: socketName(lockPath) }, () => {
      // The lock must not keep the process alive on its own.
      server.unref();
      resolve({ kind: "socket", release: () => void server.close() });
    });
  });
}
