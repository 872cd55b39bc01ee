// What the server adapters (node:http, Deno.serve, Bun.serve) share: their options, what they
// return, and the answer when the adapter itself fails. Web-standard only, so a Deno or Bun
// program that imports its adapter loads nothing from node:.
import { internalErrorResponse } from "../src/errors.ts";

export type FetchHandler = (request: Request, env?: unknown, ctx?: unknown) => Promise<Response>;

export interface ServeOptions {
  /** 0 lets the system choose; the chosen one is in the returned url. */
  port?: number;
  host?: string;
  /** Extra env passed to the handler with every request. */
  env?: Record<string, unknown>;
  /**
   * Runs as shutdown begins, before the requests in flight are waited for: ends the responses
   * that would otherwise never finish (change streams, docs/feed.md), each with its final event.
   */
  onClosing?: () => void;
  /** Runs after the server stopped accepting requests (close database connections …). */
  onShutdown?: () => Promise<void> | void;
  /** Install SIGINT/SIGTERM handlers (default true). */
  signals?: boolean;
}

export interface RunningServer {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  /** Stops accepting requests, lets the ones in flight finish, then runs onShutdown. */
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

export function serverUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Runs close() once, however often it is asked for (a second signal, close after a signal …). */
export function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}
