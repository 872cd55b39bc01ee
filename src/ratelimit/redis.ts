// RATE_LIMIT_STORE = "redis://…": rate-limit counts in Redis, where Eve keeps them, shared by
// every instance that names the same server. A window's count is INCR of a key named after the
// client, the method and the window's end, expiring with it (PEXPIREAT), both in one MULTI as
// Eve does. The official `redis` client is an optional peer dependency: this module, and with it
// the package, is imported only when the setting names Redis.
import { DatabaseUnavailableError } from "../drivers/types.ts";
import type { Logger } from "../logging.ts";
import { timeLimit } from "../util/time-limit.ts";

/** Counts hits of a key in the window ending at a given time; src/ratelimit/index.ts makes the windows. */
export interface RedisCounts {
  count(key: string, windowEnd: number): Promise<number>;
  open(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

interface RedisMulti {
  incr(key: string): RedisMulti;
  pExpireAt(key: string, at: number): RedisMulti;
  exec(): Promise<unknown[]>;
}

interface RedisClient {
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "ready", listener: () => void): unknown;
  connect(): Promise<unknown>;
  multi(): RedisMulti;
  ping(): Promise<unknown>;
  close(): Promise<void>;
  destroy(): void;
}

interface RedisModule {
  createClient(options: {
    url: string;
    disableOfflineQueue: boolean;
    socket: { connectTimeout: number; reconnectStrategy: (retries: number, cause: Error) => number | Error };
  }): RedisClient;
}

/** How long connecting, and any one command, may take before Redis counts as unreachable. */
const TIMEOUT_MS = 2000;

/** The URI without its credentials, for messages. */
export function redactedUri(uri: string): string {
  return uri.replace(/^(rediss?:\/\/)[^@/]*@/, "$1");
}

async function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  const done = await timeLimit(
    work.then((value) => ({ value })),
    TIMEOUT_MS,
    null,
  );
  if (!done) throw new Error(`${what} took longer than ${TIMEOUT_MS} ms`);
  return done.value;
}

class RedisConnection {
  private constructor(
    private readonly client: RedisClient,
    private readonly where: string,
  ) {}

  /**
   * Connects, or throws a message that says what to do: install the package, start the server,
   * or correct the URI. Once connected, a lost connection is retried in the background while
   * requests that need a count fail at once with 503 instead of waiting for it.
   */
  static async connect(uri: string, logger: Logger): Promise<RedisConnection> {
    const where = redactedUri(uri);
    let module: RedisModule;
    try {
      // A variable specifier: bundlers leave the optional package alone.
      const specifier = "redis";
      module = (await import(specifier)) as RedisModule;
    } catch (error) {
      throw new Error(`RATE_LIMIT_STORE names a Redis server (${where}), which needs the redis package: npm install redis`, { cause: error });
    }
    let connected = false;
    let reported = false;
    const client = module.createClient({
      url: uri,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: TIMEOUT_MS,
        // Before the first connection, giving up is the answer start-up needs; after, retry.
        reconnectStrategy: (retries, cause) => (connected ? Math.min(100 * 2 ** retries, 5000) : cause),
      },
    });
    // Without a listener, the client's error events would end the process.
    client.on("error", (error) => {
      if (!connected || reported) return;
      reported = true;
      logger.error(`rate-limit store: the Redis server at ${where} is unreachable; requests with a rate limit answer 503 until it is back`, null, error);
    });
    try {
      await withTimeout(client.connect(), `connecting to ${where}`);
    } catch (error) {
      client.destroy();
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`RATE_LIMIT_STORE: the Redis server at ${where} cannot be reached (${reason}): start it, correct the URI, or choose "memory" or "database"`, { cause: error });
    }
    connected = true;
    // Back again: the next outage is worth a line of its own.
    client.on("ready", () => {
      reported = false;
    });
    return new RedisConnection(client, where);
  }

  async count(key: string, windowEnd: number): Promise<number> {
    const name = `everest:rate-limit:${key}:${windowEnd}`;
    const [count] = await this.command(this.client.multi().incr(name).pExpireAt(name, windowEnd).exec(), "counting a request");
    return Number(count);
  }

  async ping(): Promise<void> {
    await this.command(this.client.ping(), "a ping");
  }

  /**
   * A graceful close waits for the replies of the commands sent; a server that stopped answering
   * (stopped, not gone: no reset comes) would hold the shutdown for ever, so it gets the time any
   * command gets, then the connection is dropped.
   */
  async close(): Promise<void> {
    const closed = await timeLimit(
      this.client.close().then(() => true, () => false),
      TIMEOUT_MS,
      false,
    );
    if (!closed) this.client.destroy();
  }

  private async command<T>(work: Promise<T>, what: string): Promise<T> {
    try {
      return await withTimeout(work, what);
    } catch (error) {
      throw new DatabaseUnavailableError(`the rate-limit store (Redis at ${this.where}) is unavailable: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

/**
 * Redis counts, connected on `open()` (start-up refuses a server it cannot reach) or by the first
 * request that needs a count; a failed connection is tried again by the next request, which may
 * find the server back, and answers 503 meanwhile.
 */
export function redisCounts(uri: string, logger: Logger): RedisCounts {
  let connecting: Promise<RedisConnection> | undefined;
  const connected = () => {
    connecting ??= RedisConnection.connect(uri, logger);
    connecting.catch(() => (connecting = undefined));
    return connecting;
  };
  return {
    count: async (key, windowEnd) => {
      let redis: RedisConnection;
      try {
        redis = await connected();
      } catch (error) {
        throw new DatabaseUnavailableError(error instanceof Error ? error.message : String(error), { cause: error });
      }
      return redis.count(key, windowEnd);
    },
    open: async () => void (await connected()),
    ping: async () => (await connected()).ping(),
    close: async () => (await connecting?.catch(() => null))?.close(),
  };
}
