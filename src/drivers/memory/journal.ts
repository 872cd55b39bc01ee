// The memory driver's durable journal: one canonical-EJSON line per acknowledged write,
// replayed on start. Appends are group-committed: lines queued while a flush is under way go out
// together in the next one, and each write's promise settles only once its line is on disk.
import { type Binary, EJSON } from "bson";
import { DatabaseUnavailableError, type Doc, type FileAccess, type IndexSpec } from "../types.ts";

export type JournalRecord =
  | { op: "insert"; db: string; coll: string; docs: Doc[] }
  /** The whole new version of the document with this `_id` (replaceOne and updateOne). */
  | { op: "replace"; db: string; coll: string; doc: Doc }
  | { op: "delete"; db: string; coll: string; ids: unknown[] }
  | { op: "clear"; db: string; coll: string }
  | { op: "indexes"; db: string; coll: string; indexes: IndexSpec[] }
  | { op: "media.put"; db: string; file: { id: string; filename?: string; contentType: string; uploadDate: Date; data: Binary } }
  | { op: "media.delete"; db: string; id: string };

const OPS = new Set<string>(["insert", "replace", "delete", "clear", "indexes", "media.put", "media.delete"]);

export function encodeRecord(record: JournalRecord): string {
  return `${EJSON.stringify(record, { relaxed: false })}\n`;
}

function decodeRecord(line: string): JournalRecord {
  const record = EJSON.parse(line, { relaxed: true }) as JournalRecord | null;
  if (!record || typeof record !== "object" || !OPS.has(record.op)) throw new Error("not a journal record");
  return record;
}

/**
 * Applies every record of a journal's text. A last line that does not parse is a write torn by
 * a crash (never acknowledged) and is dropped; anywhere else it means the file is damaged.
 * Returns the text to keep when the tail needs repairing, else null.
 */
export function replayJournal(text: string, path: string, apply: (record: JournalRecord) => void): string | null {
  const lines = text.split("\n");
  const terminated = text.endsWith("\n");
  if (terminated) lines.pop();
  let kept = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    let record: JournalRecord | null = null;
    if (line.trim() !== "") {
      try {
        record = decodeRecord(line);
      } catch (error) {
        if (i === lines.length - 1) return text.slice(0, kept);
        throw new Error(`journal ${path}: line ${i + 1} is corrupt`, { cause: error });
      }
    }
    if (record) {
      try {
        apply(record);
      } catch (error) {
        throw new Error(`journal ${path}: line ${i + 1} cannot be applied`, { cause: error });
      }
    }
    kept += line.length + 1;
  }
  // A complete last record whose newline was lost: keep it, and end it so appends start a new line.
  return terminated || text.length === 0 ? null : `${text}\n`;
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class Journal {
  private pending: string[] = [];
  private waiters: Waiter[] = [];
  private flushQueued = false;
  /** Flushes and compactions run one at a time, in order. */
  private tail: Promise<void> = Promise.resolve();
  private broken: DatabaseUnavailableError | null = null;

  constructor(
    private readonly files: FileAccess,
    readonly path: string,
  ) {}

  /**
   * Set once a write to the file failed. What is on disk is then behind what was applied in
   * memory, so the driver refuses further work rather than serve unacknowledged state.
   */
  get failure(): DatabaseUnavailableError | null {
    return this.broken;
  }

  /** Queues a line (from encodeRecord); resolves when it is durably appended. */
  append(line: string): Promise<void> {
    if (this.broken) return Promise.reject(this.broken);
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.pending.push(line);
    if (!this.flushQueued) {
      this.flushQueued = true;
      void this.enqueue(() => this.flush());
    }
    return done;
  }

  /**
   * Replaces the file with `snapshot()`, taken when every earlier line has been written. Lines
   * still queued at that moment describe writes the snapshot already holds, so they are dropped
   * and their writers are answered when the new file is in place.
   */
  compact(snapshot: () => string): Promise<void> {
    if (this.broken) return Promise.reject(this.broken);
    return this.enqueue(async () => {
      if (this.broken) throw this.broken;
      const text = snapshot();
      const waiters = this.take();
      try {
        await this.files.replaceAtomically(this.path, text);
      } catch (error) {
        throw this.fail(error, waiters);
      }
      for (const waiter of waiters) waiter.resolve();
    });
  }

  /** Resolves once every queued line has been written (or has failed). */
  async drain(): Promise<void> {
    await this.tail;
  }

  private async flush(): Promise<void> {
    this.flushQueued = false;
    const lines = this.pending;
    const waiters = this.take();
    if (lines.length === 0) return;
    if (this.broken) {
      for (const waiter of waiters) waiter.reject(this.broken);
      return;
    }
    try {
      await this.files.append(this.path, lines.join(""));
    } catch (error) {
      this.fail(error, waiters);
      return;
    }
    for (const waiter of waiters) waiter.resolve();
  }

  private take(): Waiter[] {
    const waiters = this.waiters;
    this.pending = [];
    this.waiters = [];
    return waiters;
  }

  private fail(error: unknown, waiters: Waiter[]): DatabaseUnavailableError {
    this.broken = new DatabaseUnavailableError(`the journal ${this.path} could not be written`, { cause: error });
    for (const waiter of waiters) waiter.reject(this.broken);
    return this.broken;
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.tail.then(task);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
