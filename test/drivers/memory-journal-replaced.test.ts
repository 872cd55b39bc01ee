// A `file:` journal deleted or replaced under a running server (by hand, a clean-up job, a
// restore) no longer holds what the server acknowledged: the server stops acknowledging writes
// and fails liveness, as for a journal it cannot write (docs/deploy.md), rather than append to
// whatever the path names now. Its own compactions replace the file too, and writes go on into
// the new file (test/drivers/memory-journal.test.ts, "compaction rewrites the journal…").
import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { NodeFileAccess } from "../../adapters/node-files.ts";
import { createHandler } from "../../src/handler.ts";
import type { Handler } from "../../src/handler.ts";

const directories: string[] = [];
afterAll(() => Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true }))));

async function served(): Promise<{ handler: Handler; path: string; post(title: string): Promise<Response> }> {
  const dir = await mkdtemp(join(tmpdir(), "everest-journal-replaced-"));
  directories.push(dir);
  const path = join(dir, "notes.jsonl");
  const handler = createHandler(
    { DB_URI: `file:${path}`, HEALTH_ENDPOINT: "health", RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { title: { type: "string" } } } } },
    { services: { files: new NodeFileAccess() } },
  );
  const post = (title: string) => handler(new Request("http://api.test/notes", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title }) }));
  return { handler, path, post };
}

describe("a file: journal taken away under the server", () => {
  it("deleted: no write is acknowledged after it, no file is made anew, and liveness fails", async () => {
    const { handler, path, post } = await served();
    expect((await post("before")).status).toBe(201);
    await rm(path);
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const refused = await post("after");
    expect(refused.status).toBe(503);
    expect((await refused.json())._status).toBe("ERR");
    await expect(readFile(path)).rejects.toMatchObject({ code: "ENOENT" });
    expect((await handler(new Request("http://api.test/health"))).status).toBe(503);
    expect(error.mock.calls.flat().join(" ")).toMatch(/notes\.jsonl is gone: it was deleted or moved/);
    error.mockRestore();
    await handler.app.close();
  });

  it("replaced by another file: nothing is appended to it, and liveness fails", async () => {
    const { handler, path, post } = await served();
    expect((await post("before")).status).toBe(201);
    const other = `${path}.other`;
    const foreign = '{"op":"format","version":{"$numberInt":"1"}}\n';
    await writeFile(other, foreign);
    await rename(other, path);
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect((await post("after")).status).toBe(503);
    expect(await readFile(path, "utf8")).toBe(foreign);
    expect((await handler(new Request("http://api.test/health"))).status).toBe(503);
    expect(error.mock.calls.flat().join(" ")).toMatch(/was replaced by another file/);
    error.mockRestore();
    await handler.app.close();
  });
});
