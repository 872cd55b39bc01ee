// One line per request (ACCESS_LOG), as the development server that serves an Eve app writes
// one: who asked, what, the status and how long it took. "text" is for people reading a
// terminal, "json" one object per line for log shippers. The setting is documented in
// docs/logging.md.

export type AccessLogFormat = "text" | "json";

/** What the App knows of a request once it has answered it. */
export interface AccessEntry {
  clientIp: string | null;
  method: string;
  /** The path and query string as the request sent them. */
  target: string;
  status: number;
  durationMs: number;
}

/** The line for a request answered just now. */
export function formatAccessLine(format: AccessLogFormat, entry: AccessEntry): string {
  const time = new Date().toISOString();
  const path = entry.target;
  const ms = Math.round(entry.durationMs * 10) / 10;
  if (format === "json") {
    return JSON.stringify({ time, client: entry.clientIp, method: entry.method, path, status: entry.status, duration_ms: ms });
  }
  return `${time} ${entry.clientIp ?? "-"} "${entry.method} ${path}" ${entry.status} ${ms}ms`;
}
