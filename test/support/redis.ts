// A redis-server of the test's own, from Debian's package (.ci/run installs it), on a free port,
// without persistence; stopped and started again to play an outage.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer, connect } from "node:net";

/** Whether redis-server is here; in CI it must be (.ci/run installs it), so its absence fails there. */
export const HAS_REDIS = spawnSync("redis-server", ["--version"]).status === 0 || process.env.CI === "true";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once("error", reject);
  });
}

/**
 * Whether a redis-server answers on the port: a PONG, not just a connection, which any server
 * that took the port meanwhile would accept (another test's, between freePort and redis's bind).
 */
function pongs(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => socket.write("PING\r\n"));
    socket.setTimeout(1_000, () => socket.destroy());
    socket.once("data", (data) => (socket.destroy(), resolve(data.toString().startsWith("+PONG"))));
    // A refused connection: "close" follows and answers.
    socket.once("error", () => undefined);
    socket.once("close", () => resolve(false));
  });
}

export class RedisServer {
  private child?: ChildProcess;
  private constructor(readonly port: number) {}

  /** On a port found free; one taken again before redis-server bound it is given up for another. */
  static async start(): Promise<RedisServer> {
    for (let attempt = 1; ; attempt++) {
      const server = new RedisServer(await freePort());
      try {
        await server.resume();
        return server;
      } catch (error) {
        await server.stop();
        if (attempt === 3) throw error;
      }
    }
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port, waiting until it answers. */
  async resume(): Promise<void> {
    const child = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    this.child = child;
    for (let i = 0; i < 100 && child.exitCode === null && !(await pongs(this.port)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    if (child.exitCode !== null || !(await pongs(this.port))) throw new Error(`redis-server did not start on port ${this.port}${child.exitCode !== null ? ` (it exited: ${child.exitCode})` : ""}`);
  }

  /** Stopped, not gone (SIGSTOP): connections stay open and commands go unanswered, as on a hung host. */
  freeze(): void {
    this.child?.kill("SIGSTOP");
  }

  thaw(): void {
    this.child?.kill("SIGCONT");
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await gone;
  }
}
