// The `everest serve` command line: which store it serves from (database settings as an Eve
// settings.py has them select MongoDB), the warning when the store is not durable, start-up
// errors for a driver that cannot load, and settings files that cannot be read.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadSettingsFile } from "../adapters/settings-file.ts";
import { READY_LINE } from "../scripts/serve-command.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "everest-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

interface Run {
  output: string;
  /** The exit code, or null when it was serving (and was stopped after one GET /). */
  code: number | null;
  home?: number;
}

/** Runs `everest serve <settings> --port 0 …` until it serves (then GET / and stop) or exits. */
function serve(settings: string, ...args: string[]): Promise<Run> {
  const child = spawn(process.execPath, ["--import", "tsx", "adapters/cli.ts", "serve", settings, "--port", "0", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let home: number | undefined;
  let asked = false;
  return new Promise((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const url = READY_LINE.exec(output)?.[1];
      if (!url || asked) return;
      asked = true;
      fetch(url + "/")
        .then((response) => {
          home = response.status;
          child.kill("SIGTERM");
        })
        .catch(reject);
    };
    child.stdout.on("data", read);
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    // "close", not "exit": what the server printed last (its access log line) is read by then.
    child.once("close", (code) => resolve(home === undefined ? { output, code } : { output, code: null, home }));
  });
}

describe("everest serve", () => {
  it("says it serves from the embedded in-memory store and warns that it is not durable", async () => {
    const run = await serve(file("plain.json", '{"DOMAIN": {"people": {}}}'));
    expect(run.home).toBe(200);
    expect(run.output).toMatch(/^everest serving .*plain\.json at http:\/\/127\.0\.0\.1:\d+\/ from the embedded in-memory store$/m);
    expect(run.output).toMatch(/^WARNING the data is not durable/m);
    // A server started from the command line writes one access line per request.
    expect(run.output).toMatch(/^\S+ 127\.0\.0\.1 "GET \/" 200 [\d.]+ms$/m);
  });

  it("names the API's root when URL_PREFIX and API_VERSION put it under a path", async () => {
    const run = await serve(file("prefixed.json", '{"URL_PREFIX": "api", "API_VERSION": "v1", "DOMAIN": {"people": {}}}'));
    expect(run.output).toMatch(/^everest serving .*prefixed\.json at http:\/\/127\.0\.0\.1:\d+\/api\/v1\/ from /m);
    expect(run.home).toBe(200);
  });

  it("serves an Eve settings file's MONGO_HOST/MONGO_PORT/MONGO_DBNAME from MongoDB, not from memory", async () => {
    const run = await serve(file("eve.json", '{"MONGO_HOST": "127.0.0.1", "MONGO_PORT": 1, "MONGO_DBNAME": "legacy", "MONGO1_DBNAME": "other", "DOMAIN": {"people": {}}}'));
    expect(run.output).toMatch(/ from MongoDB at 127\.0\.0\.1:1, database legacy$/m);
    expect(run.output).not.toMatch(/not durable/);
  });

  it("--db wins over the settings' database", async () => {
    const run = await serve(file("eve2.json", '{"MONGO_HOST": "127.0.0.1", "DOMAIN": {"people": {}}}'), "--db", `file:${join(dir, "data.journal")}`);
    expect(run.home).toBe(200);
    expect(run.output).toMatch(/ from the embedded store with its journal at .*data\.journal$/m);
  });

  it("stops at start-up, naming the driver and the fix, when the driver cannot load here", async () => {
    const sqlite = Number(process.versions.node.split(".")[0]) < 22;
    const run = await serve(file("s.json", '{"DOMAIN": {"people": {}}}'), "--db", sqlite ? `sqlite:${join(dir, "x.db")}` : "unknown:x");
    expect(run.code).toBe(1);
    expect(run.output).toMatch(sqlite ? /the sqlite driver needs node:sqlite, in Node 22\.5 or later/ : /unsupported database URI scheme 'unknown:'/);
    expect(run.output).not.toMatch(/everest serving/);
  });

  it("stops at start-up, naming the journal, when its directory does not exist", async () => {
    const journal = join(dir, "missing", "data.journal");
    const run = await serve(file("j.json", '{"DOMAIN": {"people": {}}}'), "--db", `file:${journal}`);
    expect(run.code).toBe(1);
    expect(run.output).toContain(`cannot open the journal ${journal}: its directory does not exist`);
  });
});

describe("settings files that cannot be used", () => {
  it("JSON with a syntax error: the file, line and column", async () => {
    const path = file("broken.json", '{\n  "DOMAIN": {\n    "people": {},\n  }\n}\n');
    await expect(loadSettingsFile(path)).rejects.toThrow(`${path}:4:3: not valid JSON (PropertyNameExpected)`);
  });

  it("JSON that is no object: the file and what it must be", async () => {
    for (const [name, text, what] of [["null.json", "null", "null"], ["text.json", '"hello"', '"hello"'], ["number.json", "42", "42"], ["list.json", "[]", "a list"]]) {
      const path = file(name!, text!);
      await expect(loadSettingsFile(path)).rejects.toThrow(`${path}: the settings must be a JSON object ({"DOMAIN": {…}, …}), not ${what}`);
    }
  });

  it("a module that does not parse or throws while it runs: the file and the error", async () => {
    const broken = file("broken.mjs", "export default { DOMAIN: {\n");
    // Its message is the loader's (Node's, or Vite's under the test runner).
    await expect(loadSettingsFile(broken)).rejects.toThrow(`${broken}: the settings module failed to load: `);
    const throwing = file("throwing.mjs", 'throw new Error("no secret set");\n');
    await expect(loadSettingsFile(throwing)).rejects.toThrow(`${throwing}: the settings module failed to load: Error: no secret set`);
  });

  // Node ≥ 22.6 strips types, except under node_modules: a package's own TypeScript example there
  // was refused as if the runtime could not load TypeScript at all.
  it.runIf(process.env.SQLITE_NODE)("TypeScript settings under node_modules on a Node that strips types: copy them out", () => {
    const path = join(dir, "node_modules", "pkg", "settings.ts");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "const settings: object = { DOMAIN: {} };\nexport default settings;\n");
    const load = `import { loadSettingsFile } from ${JSON.stringify(join(ROOT, "adapters/settings-file.ts"))}; loadSettingsFile(process.argv[1]).then(() => console.log("loaded"), (error) => console.log(error.message));`;
    const { stdout } = spawnSync(process.env.SQLITE_NODE!, ["--input-type=module", "-e", load, path], { encoding: "utf8" });
    expect(stdout.trim()).toBe(`${path}: Node does not load TypeScript from under node_modules; copy the settings file into your project and serve the copy`);
  });

  it("a module with named exports only: what to export", async () => {
    const path = file("named.mjs", "export const settings = { DOMAIN: {} };\n");
    await expect(loadSettingsFile(path)).rejects.toThrow("a settings module must default-export the settings object (it exports 'settings'; e.g. `export default settings;`)");
  });
});
