// `everest openapi <settings file> [--title …] [--server URL]`: prints the OpenAPI 3.1 document of
// the settings (what GET /openapi.json serves), e.g. to feed openapi-typescript in a build.
import { parseArgs } from "node:util";
import { openApiDocument } from "../src/openapi/index.ts";
import { loadSettingsFile } from "./settings-file.ts";

export const OPENAPI_USAGE = "usage: everest openapi <settings.json|settings.mjs> [--title TITLE] [--server URL] > openapi.json";

export async function runOpenApiCommand(argv: string[], write: (text: string) => void = (text) => process.stdout.write(text)): Promise<void> {
  try {
    const { positionals, values } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { title: { type: "string" }, server: { type: "string" }, help: { type: "boolean", short: "h" } },
    });
    const [file] = positionals;
    if (values.help || !file || positionals.length > 1) {
      console.log(OPENAPI_USAGE);
      process.exitCode = values.help ? 0 : 2;
      return;
    }
    const document = openApiDocument(await loadSettingsFile(file), {
      ...(values.title ? { title: values.title } : {}),
      ...(values.server ? { serverUrl: values.server } : {}),
    });
    write(JSON.stringify(document, null, 2) + "\n");
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  }
}
