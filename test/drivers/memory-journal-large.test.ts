// Slow (npm run test:slow, run by CI): a journal larger than 1 GB, written directly in the
// journal format as years of PATCHes would leave it, opens and serves the latest version of
// every document; compacting it then brings the file down to the live data.
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { afterAll, describe, expect, it } from "vitest";
import { NodeFileAccess } from "../../adapters/node-files.ts";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { createHandler } from "../../src/handler.ts";

const SLOW = process.env.EVEREST_SLOW === "1";
const DOCUMENTS = 20_000;
const GIGABYTE = 2 ** 30;

const directories: string[] = [];
afterAll(async () => {
  await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })));
});

const oid = (i: number) => i.toString(16).padStart(24, "0");
const line = (op: "insert" | "replace", i: number, version: number, pad: string) => {
  const doc = `{"_id":{"$oid":"${oid(i)}"},"name":"person ${i}","version":{"$numberInt":"${version}"},"pad":"${pad}"}`;
  return op === "insert" ? `{"op":"insert","db":"everest","coll":"people","docs":[${doc}]}\n` : `{"op":"replace","db":"everest","coll":"people","doc":${doc}}\n`;
};

/** Inserts DOCUMENTS people, then replaces every one, version after version, until the file passes `size` bytes; returns the versions. */
async function writeJournal(path: string, size: number): Promise<number> {
  const out = createWriteStream(path);
  const pad = "x".repeat(900);
  let written = 0;
  const put = async (text: string) => {
    written += text.length;
    if (!out.write(text)) await once(out, "drain");
  };
  await put('{"op":"format","version":{"$numberInt":"1"}}\n');
  let batch = "";
  for (let i = 0; i < DOCUMENTS; i++) batch += line("insert", i, 0, pad);
  await put(batch);
  let version = 0;
  while (written <= size) {
    version++;
    for (let start = 0; start < DOCUMENTS; start += 1000) {
      batch = "";
      for (let i = start; i < start + 1000; i++) batch += line("replace", i, version, pad);
      await put(batch);
    }
  }
  out.end();
  await once(out, "close");
  return version;
}

describe.runIf(SLOW)("memory driver: a journal larger than 1 GB", () => {
  it("opens, serves the latest version of every document, and compacts to the live data", async () => {
    const dir = await mkdtemp(join(tmpdir(), "everest-journal-large-"));
    directories.push(dir);
    const path = join(dir, "journal.jsonl");
    const versions = await writeJournal(path, GIGABYTE + 1);
    expect((await stat(path)).size).toBeGreaterThan(GIGABYTE);

    const driver = await MemoryDriver.open({ databaseName: "everest", journal: { files: new NodeFileAccess(), path } });
    const handler = createHandler({ DOMAIN: { people: { schema: { name: { type: "string" }, version: { type: "integer" } } } } }, { driver });
    for (const i of [0, 1, DOCUMENTS / 2, DOCUMENTS - 1]) {
      const response = await handler(new Request(`http://test.local/people/${oid(i)}`));
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ _id: oid(i), name: `person ${i}`, version: versions });
    }
    const page = await handler(new Request("http://test.local/people?max_results=1"));
    expect((await page.json())._meta.total).toBe(DOCUMENTS);

    // The journal is far past its live data, so compaction started by itself; this joins it.
    await driver.compact();
    const compacted = (await stat(path)).size;
    expect(compacted).toBeLessThan(DOCUMENTS * 1100);
    await handler.app.close();

    const reopened = await MemoryDriver.open({ databaseName: "everest", journal: { files: new NodeFileAccess(), path } });
    expect(await reopened.count({ collection: "people" }, { version: versions })).toBe(DOCUMENTS);
    await reopened.close();
  }, 1_200_000);
});
