// The journal across processes, with real child processes and SIGKILL: a second process on the
// same file is refused, a killed one's lock does not block a restart, the command line refuses
// to serve from a damaged journal, and a process killed at points all along compactions, while
// its writers run, loses no acknowledged write and brings back nothing deleted.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { NodeFileAccess } from "../../adapters/node-files.ts";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { BULK, people, writerState } from "./support/journal-steps.ts";

const ROOT = join(import.meta.dirname, "../..");
const WRITER = join(import.meta.dirname, "support/journal-writer.ts");
const WRITERS = 4;
/** The slow suite (npm run test:slow) kills at many more points. */
const SLOW = process.env.EVEREST_SLOW === "1";

const directories: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "everest-journal-process-"));
  directories.push(dir);
  return dir;
}
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })));
});

function start(args: string[]): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  return child;
}

/** Calls `onLine` with each stdout line until it returns true (then resolves true), or the child exits (false). */
function watch(child: ChildProcess, onLine: (line: string) => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      if (onLine(line)) {
        lines.close();
        resolve(true);
      }
    });
    child.once("exit", () => resolve(false));
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stderr })));
}

async function kill(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await gone;
}

const open = (path: string) => MemoryDriver.open({ databaseName: "everest", journal: { files: new NodeFileAccess(), path } });

describe("memory driver: the journal across processes", () => {
  it("a second process is refused while the first holds the journal; after a SIGKILL the lock does not block a restart", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const first = start([WRITER, path, "a", "1"]);
    expect(await watch(first, (line) => line.startsWith("ack"))).toBe(true);

    const second = start([WRITER, path, "b", "1"]);
    const refused = await exited(second);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`the journal ${path} is in use by process ${first.pid}`);

    await kill(first);
    expect((await readdir(join(path, ".."))).sort()).toContain("journal.jsonl.lock");
    const restarted = await open(path);
    expect(await restarted.count(people, {})).toBeGreaterThanOrEqual(BULK);
    await restarted.close();
  });

  it("the command line refuses to serve from a damaged journal, naming the file and the line", async () => {
    const dir = await tempDir();
    const path = join(dir, "journal.jsonl");
    const settings = join(dir, "settings.json");
    await writeFile(settings, JSON.stringify({ DOMAIN: { people: { schema: { name: { type: "string" } } } } }));
    const format = '{"op":"format","version":{"$numberInt":"1"}}';
    const insert = (n: number) => `{"op":"insert","db":"everest","coll":"people","docs":[{"_id":${n},"name":"n${n}"}]}`;
    await writeFile(path, `${format}\n${insert(1)}\n{"op":"ins\n${insert(2)}\n`);
    const server = start(["adapters/cli.ts", "serve", settings, "--port", "0", "--db", `file:${path}`]);
    let serving = false;
    void watch(server, (line) => (serving ||= line.startsWith("everest serving")));
    const { code, stderr } = await exited(server);
    expect(serving).toBe(false);
    expect(code).toBe(1);
    expect(stderr).toContain(`the journal ${path} is damaged at line 3`);
    // It gave the file up as it went: the lock file names nobody.
    expect(await readFile(`${path}.lock`, "utf8")).toBe("");
  });

  it("SIGKILL at points all along compactions, writers running, loses no acknowledged write and revives no deleted one", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const seeding = start([WRITER, path, "seed", "0"]);
    expect(await exited(seeding)).toMatchObject({ code: 0 });
    /** Per writer, the steps known acknowledged, kept across rounds. */
    const settled = new Map<string, number>();
    // Each round kills at the n-th announcement of one step of a file replacement: two rounds in
    // the quick suite, every step at its first, second and third compaction in the slow one.
    const points = SLOW
      ? ["replacement", "write", "commit", "committed"].flatMap((phase) => [1, 2, 3].map((n) => ({ phase, n })))
      : [{ phase: "write", n: 2 }, { phase: "commit", n: 1 }];
    let killedMidway = 0;
    for (const [round, { phase, n }] of points.entries()) {
      const acked = new Map<string, number>();
      const child = start([WRITER, path, String(round), String(WRITERS)]);
      // Acks keep being read after the kill point: under load a writer may finish more steps
      // between the phase line and the kill, and those were acknowledged too.
      const lines = createInterface({ input: child.stdout! });
      const drained = new Promise<void>((resolve) => lines.once("close", resolve));
      let seen = 0;
      const reached = await new Promise<boolean>((resolve) => {
        lines.on("line", (line) => {
          const [kind, what, step] = line.split(" ");
          if (kind === "ack") acked.set(what!, Number(step));
          if (kind === "phase" && what === phase && ++seen === n) resolve(true);
        });
        child.once("exit", () => resolve(false));
      });
      expect(reached).toBe(true);
      await kill(child);
      await drained;
      if ((await readdir(join(path, ".."))).some((name) => name.endsWith(".tmp"))) killedMidway++;

      const driver = await open(path);
      expect(await driver.count(people, { i: { $exists: true } })).toBe(BULK);
      for (let w = 0; w < WRITERS; w++) {
        const writer = `${round}-${w}`;
        const known = (acked.get(writer) ?? -2) + 1;
        const docs = (await driver.find(people, { filter: { writer } })).sort((a, b) => String(a._id).localeCompare(String(b._id)));
        // Exactly the acknowledged steps, or those and the one in flight when the process died.
        const upTo = [writerState(writer, known), writerState(writer, known + 1)];
        expect(upTo).toContainEqual(docs);
        settled.set(writer, docs.length === upTo[0]!.length && JSON.stringify(docs) === JSON.stringify(upTo[0]) ? known : known + 1);
      }
      for (const [writer, steps] of settled) {
        if (writer.startsWith(`${round}-`)) continue;
        expect((await driver.find(people, { filter: { writer } })).sort((a, b) => String(a._id).localeCompare(String(b._id)))).toEqual(writerState(writer, steps));
      }
      await driver.close();
    }
    // Kills did land while a replacement file existed, that is in the middle of a compaction.
    expect(killedMidway).toBeGreaterThan(0);
  }, 600_000);
});
