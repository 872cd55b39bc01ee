// `everest openapi <settings file>`: the document on stdout, a usage line and exit code 2 otherwise.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/openapi/index.ts";

const run = promisify(execFile);
const CLI = new URL("../../adapters/cli.ts", import.meta.url).pathname;
const EXAMPLE = new URL("../../examples/settings.json", import.meta.url).pathname;

describe("everest openapi", () => {
  it("prints the document of a settings file", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", CLI, "openapi", EXAMPLE, "--title", "Example", "--server", "https://api.example.com"]);
    const expected = openApiDocument(JSON.parse(readFileSync(EXAMPLE, "utf8")), { title: "Example", serverUrl: "https://api.example.com" });
    expect(JSON.parse(stdout)).toEqual(JSON.parse(JSON.stringify(expected)));
  });

  it("without a file: the usage, exit code 2", async () => {
    const failure = await run(process.execPath, ["--import", "tsx", CLI, "openapi"]).catch((error: { code: number; stdout: string }) => error);
    expect(failure).toMatchObject({ code: 2, stdout: expect.stringContaining("usage: everest openapi") });
  });

  it("a settings file with mistakes: the problems, exit code 1", async () => {
    const failure = await run(process.execPath, ["--import", "tsx", CLI, "openapi", "/nonexistent/settings.json"]).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 1, stderr: expect.stringContaining("nonexistent") });
  });
});
