// The stores the benches can put everest on (`--db`), each a fresh one per process measured,
// removed when the process that made it exits.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const STORES = ["memory", "file", "sqlite"] as const;
export type Store = (typeof STORES)[number];

const made: string[] = [];
process.once("exit", () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

export function isStore(name: string): name is Store {
  return (STORES as readonly string[]).includes(name);
}

/** A database URI for `store` in a new temporary directory: in memory only, the journal, or a SQLite file. */
export function freshStore(store: string): string {
  if (!isStore(store)) throw new Error(`--db ${store}: expected one of ${STORES.join(", ")}`);
  if (store === "memory") return "memory";
  const dir = mkdtempSync(join(tmpdir(), "everest-bench-"));
  made.push(dir);
  return store === "file" ? `file:${join(dir, "journal.jsonl")}` : `sqlite:${join(dir, "data.db")}`;
}
