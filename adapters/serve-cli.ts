// `everest serve <settings file> [--port 5000] [--host 127.0.0.1] [--db memory|file:PATH|sqlite:PATH|mongodb://…|https://…]`,
// one command line for every runtime: each adapter passes the function that serves a handler
// with its own server. It runs on Node, Deno and Bun alike (node:util, node:fs and the Node
// FileAccess all exist there), and prints `everest serving <file> at <url>/` once it listens.
import { databaseSettings } from "../src/data/pool.ts";
import { describeStore } from "../src/drivers/registry.ts";
import { createHandler, type Handler } from "../src/handler.ts";
import { NodeFileAccess } from "./node-files.ts";
import { parseServeArgs } from "./serve-args.ts";
import type { RunningServer, ServeOptions } from "./server.ts";
import { loadSettingsFile } from "./settings-file.ts";

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
    // The adapter opens the App before it listens, so a database that cannot be opened (a damaged
    // or locked journal) refuses to start here, and closes it on SIGTERM and SIGINT (adapters/server.ts).
    const { url } = await serve(handler, { port: args.port, host: args.host });
    const { uri, database } = databaseSettings(handler.app.config, null);
    const store = describeStore(uri, database);
    // The API's root, where its home answers: under URL_PREFIX and API_VERSION when they are set.
    console.log(`everest serving ${args.file} at ${url}${encodeURI(handler.app.config.basePath)}/ from ${store.text}`);
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
