// `everest serve <settings file> [--port 5000] [--host 127.0.0.1] [--db memory|file:PATH|sqlite:PATH|mongodb://…|https://…]`,
// one command line for every runtime: each adapter passes the function that serves a handler
// with its own server. It runs on Node, Deno and Bun alike (node:util, node:fs and the Node
// FileAccess all exist there), and prints `everest serving <file> at <url>/` once it listens.
import { parseArgs } from "node:util";
import { databaseSettings } from "../src/data/pool.ts";
import { describeStore } from "../src/drivers/registry.ts";
import { createHandler, type Handler } from "../src/handler.ts";
import { NodeFileAccess } from "./node-files.ts";
import { DEFAULT_HOST, DEFAULT_PORT, type RunningServer, type ServeOptions } from "./server.ts";
import { loadSettingsFile } from "./settings-file.ts";

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

export type Serve = (handler: Handler, options: ServeOptions) => Promise<RunningServer>;

/** Runs the command line; on any failure prints the message and exits with 1. */
export async function runServeCommand(argv: string[], serve: Serve): Promise<void> {
  try {
    const args = parseServeArgs(argv);
    if (!args) return;
    const settings = await loadSettingsFile(args.file);
    if (args.db) settings.DB_URI = args.db;
    // A server started from the command line logs each request unless the settings say otherwise.
    settings.ACCESS_LOG ??= "text";
    const handler = createHandler(settings, { services: { files: new NodeFileAccess() } });
    // A database that cannot be opened (a damaged or locked journal) refuses to start here, not with a 500 per request.
    await handler.app.open();
    // The adapter closes the App on SIGTERM and SIGINT (adapters/server.ts).
    const { url } = await serve(handler, { port: args.port, host: args.host });
    const { uri, database } = databaseSettings(handler.app.config, null);
    const store = describeStore(uri, database);
    console.log(`everest serving ${args.file} at ${url}/ from ${store.text}`);
    if (!store.durable) {
      console.warn(
        "WARNING the data is not durable: it is gone when the process stops. Keep it with --db file:PATH or --db sqlite:PATH, " +
          "or name a MongoDB server (DB_URI, MONGO_HOST, … in the settings, or --db mongodb://…)",
      );
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
