// Runs the child processes of support/incrementer.ts on one counter at once: the cross-process
// tests of atomic updates (sqlite-modify.test.ts, mongodb.test.ts).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";

const INCREMENTER = join(import.meta.dirname, "incrementer.ts");
const ROOT = join(import.meta.dirname, "../../..");

/** One process per mode, each incrementing the counter `count` times once all are ready. */
export async function incrementInProcesses(uri: string, database: string, count: number, modes: string[]): Promise<void> {
  const children = modes.map((mode) => {
    const child = spawn(process.execPath, ["--import", "tsx", INCREMENTER, uri, String(count), mode, database], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: child.stdout! });
    const said = (word: string) =>
      new Promise<void>((resolve, reject) => {
        lines.on("line", (line) => line === word && resolve());
        child.once("exit", (code) => reject(new Error(`an incrementer exited (${code}) before '${word}'`)));
      });
    return { child, ready: said("ready"), done: said("done") };
  });
  await Promise.all(children.map((c) => c.ready));
  for (const { child } of children) child.stdin!.write("go\n");
  await Promise.all(children.map((c) => c.done));
}
