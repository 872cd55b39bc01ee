// `everest data-api --db <uri> [--port 8080] [--host 127.0.0.1] --api-key KEY [--api-key KEY2]
//  [--database NAME …] [--collection NAME …] [--data-source NAME] [--max-batch N]
//  [--max-request-bytes N] [--max-response-bytes N]`
// Serves the Data API v1 protocol in front of any everest driver, so deployments that cannot
// open database connections (Workers, Deno Deploy …) reach the database through it.
import { parseArgs } from "node:util";
import { createDataApiHandler, type DataApiHandlerOptions } from "../src/gateway/index.ts";
import { createDriver } from "../src/drivers/registry.ts";
import { NodeFileAccess } from "./node-files.ts";

export const DATA_API_USAGE =
  "usage: everest data-api --db memory|file:PATH|mongodb://… --api-key KEY [--api-key KEY2] [--port 8080] [--host 127.0.0.1]\n" +
  "         [--database NAME …] [--collection NAME …] [--data-source NAME] [--max-batch N] [--max-request-bytes N] [--max-response-bytes N]\n" +
  "       keys may also come from $DATA_API_KEY (one) instead of the command line, where other users can see them";

export interface DataApiArgs {
  db: string;
  port: number;
  host: string;
  gateway: DataApiHandlerOptions;
}

/** How a runtime serves a handler (adapters/node.ts `serve` fits). */
export type ServeHandler = (
  handler: (request: Request) => Promise<Response>,
  options: { port: number; host: string; onShutdown: () => Promise<void> },
) => Promise<{ url: string }>;

function count(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed <= 0) throw new Error(`--${name}: '${value}' is not a positive whole number`);
  return parsed;
}

/** The arguments, or null after printing the usage (and setting the exit code). */
export function parseDataApiArgs(argv: string[], env: Record<string, string | undefined> = process.env): DataApiArgs | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: "string" },
      port: { type: "string", default: env.PORT ?? "8080" },
      host: { type: "string", default: "127.0.0.1" },
      "api-key": { type: "string", multiple: true },
      database: { type: "string", multiple: true },
      collection: { type: "string", multiple: true },
      "data-source": { type: "string" },
      "max-batch": { type: "string" },
      "max-request-bytes": { type: "string" },
      "max-response-bytes": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const db = values.db ?? env.DB_URI;
  if (values.help || !db) {
    console.log(DATA_API_USAGE);
    process.exitCode = values.help ? 0 : 2;
    return null;
  }
  const apiKeys = values["api-key"] ?? (env.DATA_API_KEY ? [env.DATA_API_KEY] : []);
  if (apiKeys.length === 0) throw new Error("everest data-api needs an API key: --api-key KEY or $DATA_API_KEY");
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: '${values.port}' is not a port number`);
  const gateway: DataApiHandlerOptions = { apiKeys };
  if (values.database) gateway.databases = values.database;
  if (values.collection) gateway.collections = values.collection;
  if (values["data-source"]) gateway.dataSource = values["data-source"];
  const maxBatch = count("max-batch", values["max-batch"]);
  const maxRequestBytes = count("max-request-bytes", values["max-request-bytes"]);
  const maxResponseBytes = count("max-response-bytes", values["max-response-bytes"]);
  if (maxBatch) gateway.maxBatch = maxBatch;
  if (maxRequestBytes) gateway.maxRequestBytes = maxRequestBytes;
  if (maxResponseBytes) gateway.maxResponseBytes = maxResponseBytes;
  return { db, port, host: values.host, gateway };
}

/** Runs `everest data-api …`; resolves once the gateway listens. On any failure prints the message and exits with 1. */
export async function runDataApiCommand(argv: string[], serve: ServeHandler): Promise<void> {
  try {
    const args = parseDataApiArgs(argv);
    if (!args) return;
    const driver = await createDriver(args.db, {
      databaseName: args.gateway.databases?.[0] ?? "everest",
      settings: {},
      services: { files: new NodeFileAccess() },
    });
    const handler = createDataApiHandler(driver, {
      ...args.gateway,
      onError: (error, action) => console.error(`data-api ${action || "request"} failed:`, error),
    });
    const { url } = await serve(handler, { port: args.port, host: args.host, onShutdown: () => driver.close() });
    console.log(`everest data-api serving ${args.db.replace(/\/\/[^@/]*@/, "//…@")} at ${url}/action/<name>`);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
