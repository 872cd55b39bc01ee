// `everest serve <settings file> [--port 5000] [--host 127.0.0.1] [--db memory|file:PATH|mongodb://…]`
import { parseArgs } from "node:util";
import { createHandler } from "../src/handler.ts";
import { NodeFileAccess } from "./node-files.ts";
import { serve } from "./node.ts";
import { loadSettingsFile } from "./settings-file.ts";

const USAGE = "usage: everest serve <settings.json|settings.mjs> [--port 5000] [--host 127.0.0.1] [--db memory|file:PATH|mongodb://…]";

export async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: "string", default: process.env.PORT ?? "5000" },
      host: { type: "string", default: "127.0.0.1" },
      db: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, file] = positionals;
  if (values.help || command !== "serve" || !file) {
    console.log(USAGE);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: '${values.port}' is not a port number`);
  const settings = await loadSettingsFile(file);
  const db = values.db ?? process.env.DB_URI;
  if (db) settings.DB_URI = db;
  const handler = createHandler(settings, { services: { files: new NodeFileAccess() } });
  const { url } = await serve(handler, { port, host: values.host, onShutdown: () => handler.app.close() });
  console.log(`everest serving ${file} at ${url}/`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
