// A pluggable logger. Records carry Eve's extra fields — client IP, full URL, method — so a
// log line can be traced to its request.
import type { RequestContext } from "./context.ts";

export type LogLevel = "DEBUG" | "INFO" | "WARNING" | "ERROR";

export interface LogRecord {
  level: LogLevel;
  message: string;
  clientip: string | null;
  url: string | null;
  method: string | null;
  error?: unknown;
}

export interface Logger {
  log(record: LogRecord): void;
  debug(message: string, ctx?: RequestContext | null, error?: unknown): void;
  info(message: string, ctx?: RequestContext | null, error?: unknown): void;
  warning(message: string, ctx?: RequestContext | null, error?: unknown): void;
  error(message: string, ctx?: RequestContext | null, error?: unknown): void;
}

const RANK: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 };

/** Builds a Logger from a sink; records below `level` are dropped. */
export function createLogger(sink: (record: LogRecord) => void, level: LogLevel = "WARNING"): Logger {
  const emit = (recordLevel: LogLevel) => (message: string, ctx?: RequestContext | null, error?: unknown) => {
    if (RANK[recordLevel] < RANK[level]) return;
    sink({ level: recordLevel, message, clientip: ctx?.clientIp ?? null, url: ctx?.request.url ?? null, method: ctx?.method ?? null, error });
  };
  return { log: sink, debug: emit("DEBUG"), info: emit("INFO"), warning: emit("WARNING"), error: emit("ERROR") };
}

export function consoleLogger(level: LogLevel = "WARNING"): Logger {
  return createLogger((record) => {
    const where = record.method ? ` [${record.clientip ?? "-"} ${record.method} ${record.url}]` : "";
    const line = `${record.level} ${record.message}${where}`;
    const detail = record.error instanceof Error ? (record.error.stack ?? record.error.message) : record.error;
    const write = record.level === "ERROR" ? console.error : record.level === "WARNING" ? console.warn : console.log;
    if (detail === undefined) write(line);
    else write(line, detail);
  }, level);
}
