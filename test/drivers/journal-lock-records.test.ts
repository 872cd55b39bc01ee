// The record a journal's lock file keeps (adapters/lock-holder.ts) and how a starting server
// reads it when its own kernel lock is free (adapters/file-lock.ts): a holder whose lock this
// process cannot see (a Deno server's flock, from Node) blocks it only while that holder runs.
// A zombie, a pid reused by an unrelated process, a process of another container and one from
// before a reboot are not running holders. Linux only: the record is read through /proc.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NodeFileAccess } from "../../adapters/node-files.ts";
import { thisProcess, type Holder } from "../../adapters/lock-holder.ts";
import { FileLockedError } from "../../src/drivers/types.ts";
import { rejection } from "./conformance.ts";

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function journal(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "everest-lock-record-"));
  dirs.push(dir);
  return join(dir, "journal.jsonl");
}

/** Field 22 of /proc/PID/stat, as the holder records it. */
function startOf(pid: number): string {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  return text.slice(text.lastIndexOf(")") + 2).split(" ")[19]!;
}

/** A running process that is not everest: a stand-in for a holder of another runtime. */
async function sleeper(): Promise<number> {
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  children.push(child);
  await new Promise((resolve) => child.once("spawn", resolve));
  return child.pid!;
}

/** A record as a Deno or Bun server writes it: its flock is one that Node cannot see. */
function record(pid: number, overrides: Partial<Holder> = {}): string {
  return JSON.stringify({ ...thisProcess("flock"), pid, start: startOf(pid), ...overrides }) + "\n";
}

const files = new NodeFileAccess();

describe.runIf(process.platform === "linux")("the journal lock's record", () => {
  it("a holder that still runs refuses the journal, naming it", async () => {
    const path = await journal();
    const pid = await sleeper();
    await writeFile(`${path}.lock`, record(pid));
    const error = (await rejection(files.lock(path))) as Error;
    expect(error).toBeInstanceOf(FileLockedError);
    expect(error.message).toContain(`the journal ${path} is in use by process ${pid}`);
  });

  it("a zombie, which kill(pid, 0) still finds, holds nothing", async () => {
    const path = await journal();
    // `sleep` is exec'd in place of the shell and never reaps the child the shell started.
    const parent = spawn("sh", ["-c", "sleep 0.2 & echo $!; exec sleep 60"], { stdio: ["ignore", "pipe", "ignore"] });
    children.push(parent);
    const zombie = Number(await new Promise<string>((resolve) => parent.stdout!.once("data", (data: Buffer) => resolve(data.toString()))));
    await expect.poll(() => readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1]![0]).toBe("Z");
    expect(() => process.kill(zombie, 0)).not.toThrow();
    await writeFile(`${path}.lock`, record(zombie));
    const lock = await files.lock(path);
    expect(JSON.parse(await readFile(`${path}.lock`, "utf8"))).toMatchObject({ pid: process.pid, lock: "socket" });
    await lock.release();
  });

  it("a pid now used by another process (another start time) holds nothing", async () => {
    const path = await journal();
    const pid = await sleeper();
    await writeFile(`${path}.lock`, record(pid, { start: String(Number(startOf(pid)) - 1) }));
    await (await files.lock(path)).release();
  });

  it("a holder in another container (pid namespace) or from before a reboot holds nothing", async () => {
    const pid = await sleeper();
    for (const overrides of [{ pidns: "pid:[1]" }, { boot: "00000000-0000-0000-0000-000000000000" }]) {
      const path = await journal();
      await writeFile(`${path}.lock`, record(pid, overrides));
      await (await files.lock(path)).release();
    }
  });

  it("a holder's beacon decides over its record: listening, it holds; refusing connections, it is gone", async () => {
    const path = await journal();
    const beacon = createServer().listen(`${path}.lock.sock`);
    await once(beacon, "listening");
    await writeFile(`${path}.lock`, "");
    const error = (await rejection(files.lock(path))) as Error;
    expect(error.message).toContain(`the journal ${path} is in use by another process`);
    beacon.close();
    await once(beacon, "close");
    // A socket file nobody listens on any more, as a killed holder leaves it, beside a record
    // that /proc alone would take for a live holder.
    const stale = spawnSync("python3", ["-c", `import socket; s = socket.socket(socket.AF_UNIX); s.bind(${JSON.stringify(`${path}.lock.sock`)}); s.listen()`]);
    expect(stale.status).toBe(0);
    await writeFile(`${path}.lock`, record(await sleeper()));
    const lock = await files.lock(path);
    await lock.release();
  });

  it("a record of a holder that is gone, or half written, holds nothing; the lock file is emptied on release", async () => {
    for (const text of [record(process.pid, { pid: Number(spawnSync("true").pid) }), '{"pid": 4', "12345678\n"]) {
      const path = await journal();
      await writeFile(`${path}.lock`, text.includes("start") ? text.replace(/"start":"\d+"/, '"start":"1"') : text);
      const lock = await files.lock(path);
      await lock.release();
      expect(await readFile(`${path}.lock`, "utf8")).toBe("");
    }
  });
});
