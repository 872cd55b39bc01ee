// The memory driver's journal in one process: replay (streamed, repaired, refused when damaged or
// newer), compaction (explicit and automatic), the lock, and the Node file access beneath it.
import { appendFile, lstat, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ObjectId } from "bson";
import { afterAll, describe, expect, it, vi } from "vitest";
import { NodeFileAccess } from "../../adapters/node-files.ts";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { createHandler } from "../../src/handler.ts";
import { DatabaseUnavailableError, DuplicateKeyError, FileLockedError, type FileAccess, type FileReplacement, type Target } from "../../src/drivers/types.ts";
import { rejection } from "./conformance.ts";

const directories: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "everest-journal-"));
  directories.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function journalAt(path: string, files: FileAccess = new NodeFileAccess(), compaction?: { ratio?: number; minSize?: number }): Promise<MemoryDriver> {
  return MemoryDriver.open({ databaseName: "everest", journal: { files, path, ...(compaction ? { compaction } : {}) } });
}

/** Lets queued microtasks and I/O callbacks run; no test depends on how long this takes. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
const FORMAT = '{"op":"format","version":{"$numberInt":"1"}}';

/** A FileAccess over a string, whose appends wait, while `holding`, until the test lets them through. */
class HeldFiles implements FileAccess {
  text = "";
  readonly appends: string[] = [];
  private held: Array<() => void> = [];
  holding = false;
  failAppends = false;
  failReplace = false;

  async read(): Promise<AsyncIterable<Uint8Array> | null> {
    const text = this.text;
    if (!text) return null;
    return (async function* () {
      yield new TextEncoder().encode(text);
    })();
  }

  append(_path: string, text: string): Promise<void> {
    this.appends.push(text);
    return new Promise((resolve, reject) => {
      const complete = () => {
        if (this.failAppends) return reject(new Error("disk full"));
        this.text += text;
        resolve();
      };
      if (this.holding) this.held.push(complete);
      else complete();
    });
  }

  async truncate(_path: string, length: number): Promise<void> {
    this.text = new TextDecoder().decode(new TextEncoder().encode(this.text).subarray(0, length));
  }

  async replacement(): Promise<FileReplacement> {
    let text = "";
    return {
      write: async (piece) => void (text += piece),
      commit: async () => {
        if (this.failReplace) throw new Error("disk full");
        this.text = text;
      },
      discard: async () => undefined,
    };
  }

  async lock() {
    return { release: async () => undefined };
  }

  /** Lets every append made so far complete. */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const complete of held) complete();
  }
}

/** Node file access whose reads come in pieces of `size` bytes, so lines (and characters) straddle them. */
class SmallChunks extends NodeFileAccess {
  constructor(private readonly size: number) {
    super();
  }

  override async read(path: string): Promise<AsyncIterable<Uint8Array> | null> {
    const whole = await super.read(path);
    if (!whole) return null;
    const size = this.size;
    return (async function* () {
      for await (const chunk of whole) for (let at = 0; at < chunk.length; at += size) yield chunk.subarray(at, at + size);
    })();
  }
}

describe("memory driver: journal", () => {
  const people: Target = { collection: "people" };
  const elsewhere: Target = { database: "other", collection: "things" };

  /** Everything a reopened driver must reproduce. */
  const state = async (driver: MemoryDriver, mediaIds: string[]) => ({
    people: await driver.find(people, { filter: {} }),
    elsewhere: await driver.find(elsewhere, { filter: {} }),
    media: await Promise.all(
      mediaIds.map(async (id) => {
        const file = await driver.media("other").get(id);
        return file && { ...file, read: undefined, bytes: Array.from(await (file.read() as Promise<Uint8Array>)) };
      }),
    ),
  });

  const populate = async (driver: MemoryDriver): Promise<string[]> => {
    await driver.createIndexes(people, [{ keys: [["email", 1]], unique: true, sparse: true }, { keys: [["age", 1]] }]);
    const ids = Array.from({ length: 5 }, () => new ObjectId());
    await driver.insertMany(people, ids.map((_id, i) => ({ _id, email: `p${i}@x`, age: 20 + i, since: new Date(Date.UTC(2020, i, 1)), name: "Zoë 東京 🚀" })));
    await driver.replaceOne(people, { _id: ids[0] }, { email: "first@x", age: 99 });
    await driver.updateOne(people, { _id: ids[1] }, { $set: { "profile.city": "rome" }, $unset: { since: "" } });
    await driver.deleteOne(people, { _id: ids[2] });
    await driver.deleteMany(people, { age: { $gte: 24 } });
    await driver.findOneAndUpdate(people, { _id: ids[1] }, { $inc: { age: 1 }, $push: { tags: "a" } });
    await driver.updateMany(people, {}, { $inc: { age: 10 }, $set: { seen: true } });
    await driver.insertMany(elsewhere, [{ n: 1 }, { n: 2 }]);
    await driver.deleteMany(elsewhere, {});
    await driver.insertMany(elsewhere, [{ n: 3 }]);
    const kept = await driver.media("other").put(new Uint8Array([1, 2, 3]), { filename: "a.txt", contentType: "text/plain" });
    const dropped = await driver.media("other").put(new Uint8Array([4]), {});
    await driver.media("other").delete(dropped);
    return [kept, dropped];
  };

  it("a reopened driver has the same documents, indexes and media", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    const mediaIds = await populate(driver);
    const before = await state(driver, mediaIds);
    await driver.close();
    expect(before.people).toHaveLength(2);
    expect(before.people.map((doc) => [doc.age, doc.seen])).toEqual([
      [32, true],
      [33, true],
    ]);
    expect(before.media[1]).toBeNull();

    const reopened = await journalAt(path);
    expect(await state(reopened, mediaIds)).toEqual(before);
    expect(await rejection(reopened.insertMany(people, [{ email: "p1@x" }]))).toBeInstanceOf(DuplicateKeyError);
    await reopened.close();
  });

  it("replays a journal read in small pieces, lines and characters split across them", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    const mediaIds = await populate(driver);
    const before = await state(driver, mediaIds);
    await driver.close();
    for (const size of [1, 7, 64]) {
      const reopened = await journalAt(path, new SmallChunks(size));
      expect(await state(reopened, mediaIds)).toEqual(before);
      await reopened.close();
    }
  });

  it("starts a new journal with its format, then one canonical EJSON line per write, so types survive", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    await driver.insertMany(people, [{ _id: new ObjectId(), when: new Date(5) }]);
    await driver.updateOne(people, {}, { $set: { n: 1 } });
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(FORMAT);
    expect(lines[1]).toContain('"$oid"');
    expect(lines[1]).toContain('"$date":{"$numberLong":"5"}');
    await driver.close();
  });

  it("opens a journal written before the format line existed", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    await writeFile(path, '{"op":"insert","db":"everest","coll":"people","docs":[{"_id":{"$oid":"65a000000000000000000001"},"n":1}]}\n');
    const driver = await journalAt(path);
    expect(await driver.find(people, { filter: {} })).toEqual([{ _id: new ObjectId("65a000000000000000000001"), n: 1 }]);
    await driver.close();
  });

  it("cuts off a torn last line and repairs the file so later writes replay", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    const mediaIds = await populate(driver);
    const before = await state(driver, mediaIds);
    await driver.close();
    const intact = await readFile(path, "utf8");
    await appendFile(path, '{"op":"insert","db":"everest","coll":"people","docs":[{"_id":{"$oid":');

    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const reopened = await journalAt(path);
    expect(warn.mock.calls.map(([message]) => message)).toEqual([expect.stringMatching(/^everest: the journal .* ended in an incomplete line \d+ .*: cut off$/)]);
    warn.mockRestore();
    expect(await state(reopened, mediaIds)).toEqual(before);
    expect(await readFile(path, "utf8")).toBe(intact);
    await reopened.insertMany(people, [{ email: "late@x" }]);
    await reopened.close();

    const third = await journalAt(path);
    expect(await third.count(people, {})).toBe(3);
    await third.close();
  });

  it("cuts off a last line a crash left with unwritten pages, and ends a good last line that lost its newline", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    await driver.insertMany(people, [{ n: 1 }]);
    await driver.close();
    // The append's last page reached the disk, the one before it did not (read back as NULs).
    await appendFile(path, `{"op":"insert","db":"everest","coll":"people","docs":[${"\0".repeat(40)}]}\n`);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const reopened = await journalAt(path);
    expect(warn).toHaveBeenCalledOnce();
    warn.mockRestore();
    expect(await reopened.count(people, {})).toBe(1);
    await reopened.close();

    const text = await readFile(path, "utf8");
    await writeFile(path, text.slice(0, -1));
    const third = await journalAt(path);
    await third.insertMany(people, [{ n: 2 }]);
    await third.close();
    expect((await readFile(path, "utf8")).split("\n")).toHaveLength(4);
    const fourth = await journalAt(path);
    expect(await fourth.count(people, {})).toBe(2);
    await fourth.close();
  });

  it("refuses to start from a journal damaged before its last line, naming the file, the line and what to do", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    await driver.insertMany(people, [{ n: 1 }]);
    await driver.insertMany(people, [{ n: 2 }]);
    await driver.close();
    const [format, first, second] = (await readFile(path, "utf8")).trimEnd().split("\n");
    await writeFile(path, `${format}\n${first}\ngarbage\n${second}\n`);
    const error = (await rejection(journalAt(path))) as Error;
    expect(error.message).toContain(path);
    expect(error.message).toMatch(/line 3\b/);
    expect(error.message).toMatch(/repair or remove line 3/);
    // The refusal gave the file up: once repaired, it opens.
    await writeFile(path, `${format}\n${first}\n${second}\n`);
    const repaired = await journalAt(path);
    expect(await repaired.count(people, {})).toBe(2);
    await repaired.close();
  });

  it("refuses a whole last line that does not parse (an acknowledged write, damaged), and a file that is no journal", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    await driver.insertMany(people, [{ name: "x" }]);
    await driver.close();
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace('"x"', '"x'));
    const last = (await rejection(journalAt(path))) as Error;
    expect(last.message).toMatch(/damaged at line 2\b/);
    // The last line: no claim of lines after it.
    expect(last.message).not.toMatch(/The lines after it hold/);
    expect(last.message).toContain("it and any lines after it may hold acknowledged writes");
    expect(await readFile(path, "utf8")).toBe(text.replace('"x"', '"x'));
    const other = join(await tempDir(), "notes.txt");
    await writeFile(other, "hello world\n");
    await expect(journalAt(other)).rejects.toThrow(/damaged at line 1\b/);
    expect(await readFile(other, "utf8")).toBe("hello world\n");
  });

  it("refuses a line that does not fit the state, such as an update of a document never inserted", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    await writeFile(path, `${FORMAT}\n{"op":"replace","db":"everest","coll":"people","doc":{"_id":1,"n":2}}\n`);
    await expect(journalAt(path)).rejects.toThrow(/damaged at line 2 \(no document with _id 1/);
  });

  it("refuses a journal of a newer format, or with records it does not know, even on the last line", async () => {
    const dir = await tempDir();
    const newer = join(dir, "newer.jsonl");
    await writeFile(newer, '{"op":"format","version":2}\n');
    await expect(journalAt(newer)).rejects.toThrow(/newer\.jsonl was written by a newer version of everest \(line 1: format 2\)/);
    const unknown = join(dir, "unknown.jsonl");
    await writeFile(unknown, `${FORMAT}\n{"op":"rename","db":"everest","coll":"a","to":"b"}\n`);
    await expect(journalAt(unknown)).rejects.toThrow(/newer version of everest \(line 2: unknown record 'rename'\)/);
  });

  it("says why a journal cannot be read", async () => {
    const dir = await tempDir();
    // A directory where the file should be: it exists, and reading it fails.
    await expect(journalAt(dir)).rejects.toThrow(new RegExp(`the journal ${dir} cannot be read`));
    // Its lock file is beside it, outside the directory, and stays by design (adapters/file-lock.ts).
    directories.push(`${dir}.lock`);
  });

  it("compaction rewrites the journal as the current state, equivalent on reopening", async () => {
    const dir = await tempDir();
    const path = join(dir, "journal.jsonl");
    const driver = await journalAt(path);
    const mediaIds = await populate(driver);
    for (let i = 0; i < 20; i++) await driver.updateOne(elsewhere, {}, { $set: { n: i } });
    const before = await state(driver, mediaIds);
    const linesBefore = (await readFile(path, "utf8")).trimEnd().split("\n").length;

    await driver.compact();
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    // format; people: indexes + documents; other: documents; one media file; the snapshot's end.
    expect(lines).toHaveLength(6);
    expect(lines[0]).toBe(FORMAT);
    expect(lines[5]).toMatch(/^\{"op":"snapshot","size":\{"\$numberInt":"\d+"\}\}$/);
    expect(lines.length).toBeLessThan(linesBefore);
    expect((await readdir(dir)).sort()).toEqual(["journal.jsonl", "journal.jsonl.lock", "journal.jsonl.lock.sock"]);
    await driver.insertMany(people, [{ email: "after@x" }]);
    await driver.close();
    // The lock file stays, emptied (adapters/file-lock.ts says why).
    expect((await readdir(dir)).sort()).toEqual(["journal.jsonl", "journal.jsonl.lock"]);
    expect(await readFile(`${path}.lock`, "utf8")).toBe("");

    const reopened = await journalAt(path);
    const after = await state(reopened, mediaIds);
    expect(after.elsewhere).toEqual(before.elsewhere);
    expect(after.media).toEqual(before.media);
    expect(after.people).toEqual([...before.people, expect.objectContaining({ email: "after@x" })]);
    await reopened.close();
  });

  it("writes made while compacting are neither lost nor replayed twice", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    await driver.createIndexes(people, [{ keys: [["n", 1]], unique: true }]);
    const early = Array.from({ length: 10 }, (_, n) => driver.insertMany(people, [{ n }]));
    const compaction = driver.compact();
    const late = Array.from({ length: 10 }, (_, n) => driver.insertMany(people, [{ n: n + 10 }]));
    const patches = Array.from({ length: 10 }, (_, n) => driver.updateOne(people, { n }, { $set: { patched: true } }));
    await Promise.all([...early, compaction, ...late, ...patches]);
    await driver.close();
    const reopened = await journalAt(path);
    expect(await reopened.count(people, {})).toBe(20);
    expect(await reopened.count(people, { patched: true })).toBe(10);
    await reopened.close();
  });

  it("compacts by itself when the journal outgrows the live data, and stays within bounds under a PATCH-heavy load", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const minSize = 64 * 1024;
    const driver = await journalAt(path, new NodeFileAccess(), { ratio: 2, minSize });
    const ids = Array.from({ length: 200 }, () => new ObjectId());
    await driver.insertMany(people, ids.map((_id, i) => ({ _id, i, v: 0, pad: "x".repeat(200) })));
    let written = 0;
    let largest = 0;
    for (let round = 1; round <= 40; round++) {
      await Promise.all(ids.map((_id) => driver.updateOne(people, { _id }, { $set: { v: round } })));
      written += ids.length * 300;
      largest = Math.max(largest, (await stat(path)).size);
    }
    const live = (await driver.find(people, { filter: {} })).length;
    expect(live).toBe(200);
    // ~2.4 MB of updates went through a journal that never held more than a few times the live ~60 kB.
    expect(written).toBeGreaterThan(2_000_000);
    expect(largest).toBeLessThan(8 * minSize);
    expect(await readFile(path, "utf8")).toContain('"op":"snapshot"');
    const before = await driver.find(people, { filter: {} });
    await driver.close();
    const reopened = await journalAt(path);
    expect(await reopened.find(people, { filter: {} })).toEqual(before);
    expect(before.every((doc) => doc.v === 40)).toBe(true);
    await reopened.close();
  });

  it("a write resolves only once its line is appended, and queued lines share an append", async () => {
    const files = new HeldFiles();
    const driver = await journalAt("journal", files);
    expect(files.appends).toEqual([`${FORMAT}\n`]);
    files.holding = true;
    let done = false;
    const first = driver.insertMany(people, [{ n: 1 }]).then(() => (done = true));
    await settle();
    expect(files.appends).toHaveLength(2);
    expect(done).toBe(false);
    const queued = [2, 3, 4].map((n) => driver.insertMany(people, [{ n }]));
    await settle();
    expect(files.appends).toHaveLength(2);
    files.release();
    await first;
    expect(done).toBe(true);
    await settle();
    expect(files.appends).toHaveLength(3);
    expect(files.appends[2]!.trimEnd().split("\n")).toHaveLength(3);
    files.release();
    await Promise.all(queued);
    const reopened = await journalAt("journal", files);
    expect(await reopened.count(people, {})).toBe(4);
  });

  it("after a failed append every operation is refused as unavailable", async () => {
    const files = new HeldFiles();
    const driver = await journalAt("journal", files);
    files.failAppends = true;
    expect(await rejection(driver.insertMany(people, [{ n: 1 }]))).toBeInstanceOf(DatabaseUnavailableError);
    expect(await rejection(driver.find(people, { filter: {} }))).toBeInstanceOf(DatabaseUnavailableError);
    expect(await rejection(driver.insertMany(people, [{ n: 2 }]))).toBeInstanceOf(DatabaseUnavailableError);
  });

  it("after a failed append liveness fails too, so a supervisor restarts the process (HTTP)", async () => {
    const files = new HeldFiles();
    const handler = createHandler(
      { DB_URI: "file:journal", HEALTH_ENDPOINT: "health", RESOURCE_METHODS: ["GET", "POST"], DOMAIN: { notes: { schema: { n: { type: "integer" } } } } },
      { services: { files } },
    );
    const post = (n: number) => handler(new Request("http://x/notes", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ n }) }));
    expect((await post(1)).status).toBe(201);
    expect((await handler(new Request("http://x/health"))).status).toBe(200);
    files.failAppends = true;
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect((await post(2)).status).toBe(503);
    files.failAppends = false;
    // The disk has room again, but memory may hold what the file does not: only a restart mends it.
    expect((await post(3)).status).toBe(503);
    const live = await handler(new Request("http://x/health"));
    expect(live.status).toBe(503);
    expect(await live.json()).toEqual({ status: "failed" });
    expect((await handler(new Request("http://x/health/ready"))).status).toBe(503);
    error.mockRestore();
    await handler.app.close();
  });

  it("a failed compaction leaves the previous journal in place, and the store working", async () => {
    const files = new HeldFiles();
    const driver = await journalAt("journal", files);
    await driver.insertMany(people, [{ n: 1 }]);
    const journal = files.text;
    files.failReplace = true;
    await expect(driver.compact()).rejects.toThrow(/disk full/);
    expect(files.text).toBe(journal);
    await driver.insertMany(people, [{ n: 2 }]);
    expect(await driver.count(people, {})).toBe(2);
    expect(await (await journalAt("journal", files)).count(people, {})).toBe(2);
  });

  it("a document the journal cannot encode is refused without changing the store", async () => {
    const files = new HeldFiles();
    const driver = await journalAt("journal", files);
    // BSON regular expressions have no "g" flag.
    await expect(driver.insertMany(people, [{ pattern: /x/g }])).rejects.toThrow();
    expect(await driver.count(people, {})).toBe(0);
    expect(files.appends).toHaveLength(1);
  });

  it("close waits for queued writes and gives the file up", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const driver = await journalAt(path);
    void driver.insertMany(people, [{ n: 1 }]);
    await driver.close();
    const reopened = await journalAt(path);
    expect(await reopened.count(people, {})).toBe(1);
    await expect(driver.count(people, {})).rejects.toThrow(/closed/);
    await reopened.close();
  });
});

describe("memory driver: one journal, one writer", () => {
  it("refuses a second driver on a journal this process has open, until the first closes", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const first = await journalAt(path);
    const error = await rejection(journalAt(path));
    expect(error).toBeInstanceOf(FileLockedError);
    expect((error as Error).message).toContain(path);
    await first.close();
    const second = await journalAt(path);
    await second.close();
  });

  it("refuses a journal whose lock names a live process, saying which and what to do", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    // The parent of this process is alive for as long as this test runs.
    await writeFile(`${path}.lock`, `${process.ppid}\n`);
    const error = (await rejection(journalAt(path))) as Error;
    expect(error).toBeInstanceOf(FileLockedError);
    expect(error.message).toContain(`in use by process ${process.ppid}`);
    expect(error.message).toContain(`${path}.lock`);
  });

  it("takes over a lock left by a process that is gone, and removes replacements a crash left behind", async () => {
    const dir = await tempDir();
    const path = join(dir, "journal.jsonl");
    const gone = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
    await writeFile(`${path}.lock`, gone.stdout);
    await writeFile(`${path}.0123456789ab.tmp`, "half a snapshot");
    const driver = await journalAt(path);
    await driver.insertMany({ collection: "c" }, [{ n: 1 }]);
    expect((await readdir(dir)).sort()).toEqual(["journal.jsonl", "journal.jsonl.lock", "journal.jsonl.lock.sock"]);
    expect(JSON.parse(await readFile(`${path}.lock`, "utf8"))).toMatchObject({ pid: process.pid });
    await driver.close();
  });
});

describe("memory driver: a journal reached through a symbolic link", () => {
  it("is the file's own: one lock for both names, and compaction replaces the file, not the link", async () => {
    const dir = await tempDir();
    const path = join(dir, "journal.jsonl");
    const link = join(dir, "link.jsonl");
    const first = await journalAt(path);
    await symlink(path, link);
    const error = await rejection(journalAt(link));
    expect(error).toBeInstanceOf(FileLockedError);
    await first.close();

    const viaLink = await journalAt(link);
    await viaLink.insertMany({ collection: "c" }, [{ n: 1 }]);
    await viaLink.compact();
    await viaLink.insertMany({ collection: "c" }, [{ n: 2 }]);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    await viaLink.close();
    const reopened = await journalAt(path);
    expect((await reopened.find({ collection: "c" }, { filter: {} })).map((d) => d.n)).toEqual([1, 2]);
    await reopened.close();
  });
});

describe("NodeFileAccess", () => {
  const files = new NodeFileAccess();
  const text = async (path: string) => {
    const source = await files.read(path);
    if (!source) return null;
    const parts: Uint8Array[] = [];
    for await (const chunk of source) parts.push(chunk);
    return Buffer.concat(parts).toString("utf8");
  };

  it("reads a missing file as null, appends to create it, truncates it", async () => {
    const path = join(await tempDir(), "log");
    expect(await text(path)).toBeNull();
    await files.append(path, "a\n");
    await files.append(path, "b\n");
    expect(await text(path)).toBe("a\nb\n");
    await files.truncate(path, 2);
    expect(await text(path)).toBe("a\n");
  });

  it("reads a file larger than one chunk whole", async () => {
    const path = join(await tempDir(), "big");
    const big = "0123456789abcdef".repeat(200_000);
    await writeFile(path, big);
    expect(await text(path)).toBe(big);
  });

  it("replaces a file whole, leaving no temporary file behind; a discarded replacement changes nothing", async () => {
    const dir = await tempDir();
    const path = join(dir, "log");
    await files.append(path, "old\n");
    const discarded = await files.replacement(path);
    await discarded.write("never\n");
    await discarded.discard();
    expect(await text(path)).toBe("old\n");
    const replacement = await files.replacement(path);
    await replacement.write("new\n");
    await replacement.write("er\n");
    await replacement.commit();
    expect(await text(path)).toBe("new\ner\n");
    expect(await readdir(dir)).toEqual(["log"]);
  });

  it("an append that fails part way (a full disk) leaves the file as it was", async () => {
    const path = join(await tempDir(), "log");
    await writeFile(path, "x".repeat(400));
    // A file-size limit of one 512-byte block: the append is cut short with EFBIG, as on a full disk.
    const script = `import("${new URL("../../adapters/node-files.ts", import.meta.url).pathname}").then(({ NodeFileAccess }) => new NodeFileAccess().append(${JSON.stringify(path)}, "y".repeat(2000))).then(() => console.log("appended"), (error) => console.log(error.code))`;
    const run = spawnSync("sh", ["-c", `ulimit -f 1; exec "${process.execPath}" --import tsx -e '${script}'`], { encoding: "utf8" });
    expect(run.stdout.trim()).toBe("EFBIG");
    expect(await readFile(path, "utf8")).toBe("x".repeat(400));
  });

  it("a replacement that cannot be created leaves nothing behind", async () => {
    const dir = await tempDir();
    await expect(files.replacement(join(dir, "missing", "log"))).rejects.toThrow();
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("memory journal: the change log", () => {
  it("survives a restart and a compaction: same positions, same images, recording goes on after them", async () => {
    const path = join(await tempDir(), "journal.jsonl");
    const t: Target = { collection: "people" };
    let driver = await journalAt(path);
    await driver.changes.record(t);
    const start = await driver.changes.head();
    await driver.insertMany(t, [{ _id: 1, n: 1 }, { _id: 2, n: 2 }, { _id: 3, n: 3 }]);
    await driver.updateOne(t, { _id: 1 }, { $set: { n: 10 } });
    await driver.replaceOne(t, { _id: 2 }, { m: 1 });
    // The atomic updates and deletes of update operators and writes by filter (docs/updates.md).
    await driver.findOneAndUpdate(t, { _id: 2 }, { $inc: { m: 1 } });
    await driver.updateMany(t, {}, { $inc: { n: 1 } }, { ids: [3, 1] });
    await driver.deleteMany(t, {}, { ids: [1] });
    await driver.deleteOne(t, { _id: 3 });
    const read = async (d: MemoryDriver, from: string) => {
      const result = await d.changes.read(undefined, from, 100);
      if (result.expired) throw new Error("expired");
      return result.records;
    };
    const written = await read(driver, start);
    expect(written.map((r) => [r.op, r.id])).toEqual([
      ["insert", 1],
      ["insert", 2],
      ["insert", 3],
      ["update", 1],
      ["replace", 2],
      ["update", 2],
      ["update", 1],
      ["update", 3],
      ["delete", 1],
      ["delete", 3],
    ]);
    expect(written.slice(5, 8).map((r) => r.after)).toEqual([{ _id: 2, m: 2 }, { _id: 1, n: 11 }, { _id: 3, n: 4 }]);
    await driver.close();

    driver = await journalAt(path);
    expect(await read(driver, start)).toEqual(written);
    await driver.compact();
    await driver.close();

    driver = await journalAt(path);
    expect(await read(driver, start)).toEqual(written);
    expect(await read(driver, written[4]!.position)).toEqual(written.slice(5));
    await driver.changes.record(t);
    await driver.insertMany(t, [{ _id: 4 }]);
    const [next] = await read(driver, written[9]!.position);
    expect(next).toMatchObject({ op: "insert", id: 4 });
    await driver.close();
  });
});

// docs/drivers.md, "Removing `unique`": on the embedded store, no other client can drop an
// index, so everest drops those no resource declares any more, and the journal remembers it.
describe("memory journal: a unique the settings no longer hold", () => {
  const settings = (path: string, unique: boolean) => ({
    DB_URI: `file:${path}`,
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      // Versioned: its shadow collection's index is declared by no resource of DOMAIN, and stays.
      people: { versioning: true, schema: { email: { type: "string", ...(unique ? { unique: true } : {}) }, n: { type: "integer" } }, mongo_indexes: { by_n: [["n", 1]] } },
      // Another resource over the collection: its declared index stays. It keeps `email` unique
      // as people does: a resource over the collection that did not would get it no index.
      admins: { datasource: { source: "people" }, schema: { email: { type: "string", ...(unique ? { unique: true } : {}) } }, mongo_indexes: { by_email: [["email", -1]] } },
    },
  });

  it("stops refusing duplicates once its index is dropped, says so, and stays dropped after a restart", async () => {
    const dir = await tempDir();
    const open = (unique: boolean, warnings: string[] = []) => {
      const handler = createHandler(settings(join(dir, "journal"), unique) as never, { services: { files: new NodeFileAccess() }, logger: { log: () => undefined, debug: () => undefined, info: () => undefined, warning: (message: string) => void warnings.push(message), error: () => undefined } as never });
      const post = (email: string) => handler(new Request("http://x/people", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ email }) }));
      return { handler, post };
    };
    const first = open(true);
    expect((await first.post("a@x")).status).toBe(201);
    expect((await first.post("a@x")).status).toBe(422);
    await first.handler.app.close();

    const warnings: string[] = [];
    const second = open(false, warnings);
    expect((await second.post("a@x")).status).toBe(201);
    expect(warnings.filter((w) => w.includes("dropped"))).toEqual(["index 'email_unique' of 'people' dropped: no resource declares it any more"]);
    await second.handler.app.close();

    const replayed: string[] = [];
    const third = open(false, replayed);
    expect((await third.post("a@x")).status).toBe(201);
    expect(replayed.filter((w) => w.includes("dropped"))).toEqual([]);
    const page = await (await third.handler(new Request("http://x/people?max_results=10"))).json();
    expect(page._meta.total).toBe(3);
    await third.handler.app.close();

    // Put back, the rule finds duplicates: served by lookups, as docs/drivers.md says.
    const fourth = open(true);
    expect((await fourth.post("a@x")).status).toBe(422);
    expect((await fourth.post("b@x")).status).toBe(201);
    await fourth.handler.app.close();
  });

  it("frees a value held only by a soft-deleted document once soft delete is turned on", async () => {
    // A unique index (built before soft delete) refused values that only flagged documents held.
    const dir = await tempDir();
    const open = (softDelete: boolean) => {
      const base = settings(join(dir, "journal"), true);
      const handler = createHandler({ ...base, ITEM_METHODS: ["GET", "DELETE"], DOMAIN: { people: { ...base.DOMAIN.people, soft_delete: softDelete } } } as never, { services: { files: new NodeFileAccess() } });
      const post = (email: string) => handler(new Request("http://x/people", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ email }) }));
      return { handler, post };
    };
    const first = open(false);
    const created = await (await first.post("a@x")).json();
    await first.handler.app.close();
    const second = open(true);
    expect((await second.handler(new Request(`http://x/people/${created._id}`, { method: "DELETE", headers: { "If-Match": created._etag } }))).status).toBe(204);
    expect((await second.post("a@x")).status).toBe(201);
    expect((await second.post("a@x")).status).toBe(422);
    await second.handler.app.close();
  });
});
