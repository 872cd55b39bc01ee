// serve:workers' modules for a JSON settings file (scripts/worker-cache.ts): everest's bundle is
// built once and used again while its input files are unchanged, and the entry written over it
// serves the file's settings. The runtime suite runs every API through it on workerd; this checks
// what that cannot see: that a change to an input is noticed, and that the entry carries the
// settings exactly.
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workerForJsonSettings } from "../../scripts/worker-cache.ts";

let root: string;
let cache: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "everest-worker-cache-"));
  cache = join(root, "cache");
});
afterAll(() => rm(root, { recursive: true, force: true }));

type Manifest = { key: string; inputs: Record<string, string> };
const manifest = async () => JSON.parse(await readFile(join(cache, "manifest.json"), "utf8")) as Manifest;

async function settingsFile(name: string, text: string): Promise<string> {
  const path = join(root, name);
  await writeFile(path, text);
  return path;
}

describe("serve:workers' bundle for JSON settings", () => {
  it("serves the settings from an entry over everest's bundle, which is built once and used again", async () => {
    const file = await settingsFile("notes.json", JSON.stringify({ DOMAIN: { notes: { resource_methods: ["GET", "POST"], schema: { title: { type: "string" } } } } }));
    const first = await workerForJsonSettings(file, join(root, "first"), cache);
    expect(first[0]).toMatchObject({ name: "worker.js", imports: ["everest.js"] });
    expect(first.map((module) => module.name)).toContain("everest.js");
    // A build writes the manifest anew (a file renamed over the old one), so the same file means none ran.
    const built = (await stat(join(cache, "manifest.json"))).ino;
    const second = await workerForJsonSettings(file, join(root, "second"), cache);
    expect(second.map((module) => module.name)).toEqual(first.map((module) => module.name));
    expect((await stat(join(cache, "manifest.json"))).ino).toBe(built);

    const worker = (await import(pathToFileURL(second[0]!.path).href)) as { default: { fetch(request: Request): Promise<Response> } };
    const created = await worker.default.fetch(new Request("http://api.test/notes", { method: "POST", headers: { "content-type": "application/json" }, body: '{"title": "a"}' }));
    expect(created.status).toBe(201);
    const refused = await worker.default.fetch(new Request("http://api.test/notes", { method: "POST", headers: { "content-type": "application/json" }, body: '{"title": 1}' }));
    expect(refused.status).toBe(422);
  });

  it("builds again once an input file differs from what the kept build was made of", async () => {
    const file = await settingsFile("plain.json", '{"DOMAIN": {"notes": {}}}');
    await workerForJsonSettings(file, join(root, "third"), cache);
    const kept = await manifest();
    const [input] = Object.keys(kept.inputs).filter((path) => path.endsWith("adapters/workers.ts"));
    expect(input).toBeDefined();
    // As if the file had been edited since: the digest recorded no longer matches its content.
    await writeFile(join(cache, "manifest.json"), JSON.stringify({ ...kept, inputs: { ...kept.inputs, [input!]: "0".repeat(40) } }));
    await workerForJsonSettings(file, join(root, "fourth"), cache);
    expect((await manifest()).inputs[input!]).toBe(kept.inputs[input!]);
    await expect(readFile(join(root, "fourth", "worker.js"), "utf8")).resolves.toContain("createWorker");
  });

  it("keeps a '__proto__' key of the settings a key, as the JSON file has it", async () => {
    const file = await settingsFile("proto.json", '{"DOMAIN": {"notes": {}}, "__proto__": {"X_DOMAINS": "*"}}');
    const modules = await workerForJsonSettings(file, join(root, "fifth"), cache);
    const entry = await readFile(modules[0]!.path, "utf8");
    expect(entry).toContain("JSON.parse(");
    // everest refuses a setting it does not know, and it is handed one named __proto__.
    await expect(import(pathToFileURL(modules[0]!.path).href)).rejects.toThrow(/__proto__/);
  });

  it("reports a file that is not JSON as the other runtimes do, naming the line and column", async () => {
    const file = await settingsFile("broken.json", '{"DOMAIN": {\n  "notes": {},\n}}');
    await expect(workerForJsonSettings(file, join(root, "sixth"), cache)).rejects.toThrow(/broken\.json:3:1: not valid JSON/);
  });
});
