// What the sqlite driver's test files share: whether this runtime has an SQLite the driver can
// use, and database files in directories of their own, removed when the file's tests are done.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/** Whether this runtime has an SQLite the driver can use (node:sqlite needs Node ≥ 22.5; Bun has bun:sqlite). */
export async function hasSqlite(): Promise<boolean> {
  if ((globalThis as { Bun?: unknown }).Bun) return true;
  const specifier = "node:sqlite";
  return import(specifier).then(
    () => true,
    () => false,
  );
}

/** A function giving a new database file per call, all removed after the calling test file's tests. */
export function tempFiles(): () => Promise<string> {
  const directories: string[] = [];
  afterAll(async () => {
    await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), "everest-sqlite-"));
    directories.push(dir);
    return join(dir, "data.db");
  };
}
