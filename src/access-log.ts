// One line per request (ACCESS_LOG), as the development server that serves an Eve app writes
// one: who asked, what, the status and how long it took. "text" is for people reading a
// terminal, "json" one object per line for log shippers. The setting is documented in
// docs/logging.md.

export type AccessLogFormat = "text" | "json";

export interface AccessEntry {
  time: Date;
  clientIp: string | null;
  method: string;
  /** The path and query string as the client sent them. */
  path: string;
  status: number;
  durationMs: number;
}

export function formatAccessLine(format: AccessLogFormat, entry: AccessEntry): string {
  const ms = Math.round(entry.durationMs * 10) / 10;
  if (format === "json") {
    return JSON.stringify({ time: entry.time.toISOString(), client: entry.clientIp, method: entry.method, path: entry.path, status: entry.status, duration_ms: ms });
  }
  return `${entry.time.toISOString()} ${entry.clientIp ?? "-"} "${entry.method} ${entry.path}" ${entry.status} ${ms}ms`;
}
