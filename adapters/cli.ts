#!/usr/bin/env node
// The `everest` command on Node: `everest serve <settings file> [--port …] [--host …] [--db …]`,
// `everest data-api --db … --api-key …` (adapters/data-api-cli.ts), and
// `everest openapi <settings file>` (adapters/openapi-cli.ts).
import { runDataApiCommand } from "./data-api-cli.ts";
import { runOpenApiCommand } from "./openapi-cli.ts";
import { runServeCommand } from "./serve-cli.ts";
import { serve } from "./node.ts";

const argv = process.argv.slice(2);
if (argv[0] === "data-api") await runDataApiCommand(argv.slice(1), serve);
else if (argv[0] === "openapi") await runOpenApiCommand(argv.slice(1));
else await runServeCommand(argv, serve);
