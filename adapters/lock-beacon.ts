// A journal holder's beacon: a Unix socket at `PATH.lock.sock` that it listens on while it holds
// the journal. Connecting to it tells any process that shares the file system — of any runtime,
// in any container — whether the holder lives: the kernel closes a dead process's socket (a
// zombie's too), so a connection is refused once it is gone. It is how a server checks a holder
// whose kernel lock it cannot see (adapters/file-lock.ts): Deno may not read /proc at all.
import { rm } from "node:fs/promises";
import { connect, createServer } from "node:net";

export type Probe = "alive" | "gone" | "absent";

export interface Beacon {
  close(): Promise<void>;
}

/** sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included. */
const MAX_SOCKET_PATH = 103;

const fits = (path: string) => new TextEncoder().encode(path).length <= MAX_SOCKET_PATH;

/** Whether a process listens at `path`: absent when there is no socket there to ask. */
export function probeBeacon(path: string): Promise<Probe> {
  if (!fits(path)) return Promise.resolve("absent");
  return new Promise((resolve) => {
    const socket = connect({ path });
    socket.once("connect", () => {
      socket.destroy();
      resolve("alive");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve(error.code === "ECONNREFUSED" ? "gone" : "absent");
    });
  });
}

/**
 * Listens at `path`, replacing a socket a dead holder left (the caller has just found it gone).
 * Null where no beacon can be made (a path too long for a socket, a file system without them):
 * the holder's record is then checked through /proc instead (adapters/lock-holder.ts).
 */
export async function listenBeacon(path: string): Promise<Beacon | null> {
  if (!fits(path)) return null;
  await rm(path, { force: true });
  const server = createServer((socket) => socket.destroy());
  const listening = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen({ path }, () => resolve(true));
  });
  if (!listening) return null;
  // The beacon must not keep the process alive on its own.
  server.unref();
  return {
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(path, { force: true });
    },
  };
}
