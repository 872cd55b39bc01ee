// What the server adapters (node:http, Deno.serve, Bun.serve) share: their options, what they
// return, and the answer when the adapter itself fails. Web-standard only, so a Deno or Bun
// program that imports its adapter loads nothing from node:.
import { internalErrorResponse, UNREADABLE_URL } from "../src/errors.ts";

export type FetchHandler = (request: Request, env?: unknown, ctx?: unknown) => Promise<Response>;

export interface ServeOptions {
  /** 0 lets the system choose; the chosen one is in the returned url. */
  port?: number;
  host?: string;
  /** Extra env passed to the handler with every request. */
  env?: Record<string, unknown>;
  /**
   * Runs last in a shutdown, after the server stopped and, for a createHandler handler, after
   * `handler.app.close()` (docs/deploy.md).
   */
  onShutdown?: () => Promise<void> | void;
  /** Install SIGINT/SIGTERM handlers (default true). */
  signals?: boolean;
}

export interface RunningServer {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  /** Stops accepting requests, lets the ones in flight finish (App.close), then runs onShutdown. */
  close(): Promise<void>;
}

export const DEFAULT_PORT = 5000;
export const DEFAULT_HOST = "127.0.0.1";

// The handler answers every error itself; this is for failures around it (a broken socket,
// a body stream that throws).
export function adapterFailure(error: unknown): Response {
  console.error("ERROR adapter failure", error);
  return internalErrorResponse();
}

/** A request whose Host header or target makes no URL (`Host: a b`): nothing to route. */
export function unreadableRequestResponse(): Response {
  const body = `{"_status": "ERR", "_error": {"code": 400, "message": ${JSON.stringify(UNREADABLE_URL)}}}`;
  return new Response(body, { status: 400, headers: { "Content-Type": "application/json", "Content-Length": String(body.length) } });
}

/** A request that came after shutdown began, where the server cannot stop taking them: told so, and its connection closed. */
export function shuttingDownResponse(): Response {
  return new Response('{"_status": "ERR", "_error": {"code": 503, "message": "The service is shutting down."}}', {
    status: 503,
    headers: { "Content-Type": "application/json", Connection: "close", "Retry-After": "1" },
  });
}

export function serverUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * Opens the App behind a createHandler handler, then listens, as `everest serve` always did: what
 * cannot work (a refused Data API gateway, a damaged or locked journal, a Redis that does not
 * answer) stops start-up, where a server listening without it answered 503 to every request and
 * readiness never came. When either step fails the App is closed again, so that nothing it
 * opened (a journal and its lock) outlives the failed start. A plain function handler has
 * nothing to open.
 */
export async function openThenListen<T>(handler: FetchHandler, listen: () => Promise<T>): Promise<T> {
  const app = (handler as { app?: { open(): Promise<void>; close(): Promise<void> } }).app;
  try {
    if (app) await app.open();
    return await listen();
  } catch (error) {
    await app?.close().catch(() => undefined);
    throw error;
  }
}

/** What an adapter's server does to stop: `stop` stops accepting and settles once every connection has closed; `force` closes those still open. */
export interface Stopping {
  stop(): Promise<unknown>;
  force(): void;
}

/**
 * The shutdown every adapter runs on SIGTERM, SIGINT or `close()`: the server stops accepting,
 * the App behind a createHandler handler ends the service in order within SHUTDOWN_TIMEOUT
 * (docs/contracts.md §7: streams, requests in flight, the server's connections, then the
 * databases), connections still open after that are closed, and `onShutdown` runs last. A plain
 * function handler has no App: its server's connections are simply waited for.
 */
export function shutdown(handler: FetchHandler, options: ServeOptions, server: Stopping): () => Promise<void> {
  const app = (handler as { app?: { close(connections?: Promise<unknown>): Promise<void> } }).app;
  return once(async () => {
    const connections = server.stop();
    await (app ? app.close(connections) : connections);
    server.force();
    await options.onShutdown?.();
  });
}

/**
 * Installs the signal handlers (unless `signals: false`): shut down, then exit 0, or 1 when
 * shutting down failed. `listen` must keep listening after the first signal: a second one,
 * SIGINT or SIGTERM, during the drain ends the process at once with 1 (docs/deploy.md).
 */
export function onSignals(options: ServeOptions, close: () => Promise<void>, listen: (signal: "SIGINT" | "SIGTERM", stop: () => void) => void, exit: (code: number) => void): void {
  if (options.signals === false) return;
  let draining = false;
  const stop = () => {
    if (draining) {
      console.error("ERROR a second signal during the shutdown: exiting without waiting for the drain");
      return exit(1);
    }
    draining = true;
    void close().then(
      () => exit(0),
      (error: unknown) => {
        console.error("ERROR shutdown failed", error);
        exit(1);
      },
    );
  };
  listen("SIGINT", stop);
  listen("SIGTERM", stop);
}

/** Runs close() once, however often it is asked for (a second signal, close after a signal …). */
export function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}
