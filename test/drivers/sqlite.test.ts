// The sqlite driver on this runtime's SQLite (node:sqlite needs Node ≥ 22.5; CI runs this file
// with a newer Node when the machine's is older, and Bun with bun:sqlite). Without one, the
// tests are reported as skipped and the start-up error is checked instead.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDriver } from "../../src/drivers/registry.ts";
import { runDriverConformance } from "./conformance.ts";

const directories: string[] = [];
async function tempFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "everest-sqlite-"));
  directories.push(dir);
  return join(dir, "data.db");
}
afterAll(async () => {
  await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Whether this runtime has an SQLite the driver can use. */
export async function hasSqlite(): Promise<boolean> {
  if ((globalThis as { Bun?: unknown }).Bun) return true;
  const specifier = "node:sqlite";
  return import(specifier).then(
    () => true,
    () => false,
  );
}

const available = await hasSqlite();

describe.skipIf(available)("sqlite driver without node:sqlite", () => {
  it("refuses to start, naming the Node version it needs", async () => {
    await expect(createDriver(`sqlite:${await tempFile()}`, { databaseName: "everest", settings: {} })).rejects.toThrow(/Node 22\.5/);
  });
});

describe.skipIf(!available)("sqlite driver", () => {
  runDriverConformance("sqlite", async () => createDriver(`sqlite:${await tempFile()}`, { databaseName: "everest", settings: {} }));
});
