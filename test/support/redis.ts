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

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

export class RedisServer {
  private child?: ChildProcess;
  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.resume();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port, waiting until it accepts connections. */
  async resume(): Promise<void> {
    this.child = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    for (let i = 0; i < 100 && !(await accepting(this.port)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    if (!(await accepting(this.port))) throw new Error(`redis-server did not start on port ${this.port}`);
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await gone;
  }
}
