// The `everest serve` command line, apart from what serves it (adapters/serve-cli.ts): the Workers
// server (scripts/serve-workers.ts) reads the same arguments but runs everest inside workerd, so
// it loads this alone rather than everest's whole source on every start.
import { parseArgs } from "node:util";
import { DEFAULT_HOST, DEFAULT_PORT } from "./server.ts";

export const USAGE = [
  "usage: everest serve <settings.json|settings.mjs> [--port 5000] [--host 127.0.0.1] [--db memory|file:PATH|sqlite:PATH|mongodb://…|https://…]",
  "       everest data-api --db … --api-key KEY …   (everest data-api --help)",
  "       everest openapi <settings.json|settings.mjs> …   (everest openapi --help)",
  "--port defaults to $PORT, else 5000; --db to $DB_URI, else the database the settings name.",
].join("\n");

export interface ServeArgs {
  file: string;
  port: number;
  host: string;
  /** --db, else $DB_URI; undefined keeps the settings' own database. */
  db?: string;
}

/** The arguments, or null after printing the usage (and setting the exit code) when they are not a serve command. */
export function parseServeArgs(argv: string[]): ServeArgs | null {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: "string", default: process.env.PORT ?? String(DEFAULT_PORT) },
      host: { type: "string", default: DEFAULT_HOST },
      db: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, file] = positionals;
  if (values.help || command !== "serve" || !file) {
    console.log(USAGE);
    process.exitCode = values.help ? 0 : 2;
    return null;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: '${values.port}' is not a port number`);
  const db = values.db ?? process.env.DB_URI;
  return { file, port, host: values.host, ...(db ? { db } : {}) };
}
