// The memory driver's durable journal: one canonical-EJSON line per acknowledged write,
// replayed on start. Appends are group-committed: lines queued while a flush is under way go out
// together in the next one, and each write's promise settles only once its line is on disk.
// Compaction rewrites the file as the current state in the background (compaction.ts).
import { type Binary, EJSON } from "bson";
import { DatabaseUnavailableError, type Doc, type FileAccess, type FileLock, type IndexSpec } from "../types.ts";
import type { FeedMarker, LogState } from "./change-log.ts";
import { parseCanonical } from "./canonical-ejson.ts";

/** The format this version writes and reads; a journal declaring a later one is refused. */
export const JOURNAL_FORMAT = 1;

export type JournalRecord =
  /** The first line of every journal this version creates. */
  | { op: "format"; version: number }
  /** Ends a compacted snapshot: `size` is the snapshot's length, the measure compaction's threshold uses. */
  | { op: "snapshot"; size: number }
  /** `feed`: the write is in the change log too (change-log.ts), its changes numbered from there. */
  | { op: "insert"; db: string; coll: string; docs: Doc[]; feed?: FeedMarker }
  /** The whole new version of the document with this `_id` (replaceOne, updateOne, findOneAndUpdate). */
  | { op: "replace"; db: string; coll: string; doc: Doc; feed?: FeedMarker }
  /** Whole new versions of several documents, stored together or not at all (updateMany); recorded as updates. */
  | { op: "replaceMany"; db: string; coll: string; docs: Doc[]; feed?: FeedMarker }
  | { op: "delete"; db: string; coll: string; ids: unknown[]; feed?: FeedMarker }
  /** A compacted snapshot's copy of a database's change log; `continued` lines add to the one before. */
  | ({ op: "changes"; db: string; continued?: true } & LogState)
  | { op: "clear"; db: string; coll: string }
  | { op: "indexes"; db: string; coll: string; indexes: IndexSpec[] }
  | { op: "dropIndexes"; db: string; coll: string; names: string[] }
  | { op: "media.put"; db: string; file: { id: string; filename?: string; contentType: string; uploadDate: Date; data: Binary } }
  | { op: "media.delete"; db: string; id: string };

/** Records that change the store, as opposed to the journal's own bookkeeping. */
export type DataRecord = Exclude<JournalRecord, { op: "format" | "snapshot" }>;

const OPS = new Set<string>(["format", "snapshot", "insert", "replace", "replaceMany", "delete", "clear", "indexes", "dropIndexes", "media.put", "media.delete", "changes"]);

export function encodeRecord(record: JournalRecord): string {
  return `${EJSON.stringify(record, { relaxed: false })}\n`;
}

export const FORMAT_LINE = encodeRecord({ op: "format", version: JOURNAL_FORMAT });

/** The journal cannot be opened; the message says where and what to do. */
export class JournalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "JournalError";
  }
}

const newer = (path: string, line: number, what: string) =>
  new JournalError(
    `the journal ${path} was written by a newer version of everest (line ${line}: ${what}); this version reads format ${JOURNAL_FORMAT}. ` +
      `Run the newer everest, or restore a backup of the journal written by this one.`,
  );

/** What replaying a journal found, for the compaction threshold. */
export interface ReplayedJournal {
  /** Bytes in the file once replayed (and repaired). */
  size: number;
  /** The length of the last compacted snapshot in it; 0 when it was never compacted. */
  baseline: number;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The journal's lines, each with the byte count it takes including its newline (absent on a last line without one). */
async function* lines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<{ bytes: Uint8Array; terminated: boolean }> {
  let carry: Uint8Array[] = [];
  for await (const chunk of chunks) {
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, end);
      yield { bytes: carry.length > 0 ? concat([...carry, piece]) : piece, terminated: true };
      carry = [];
      start = end + 1;
    }
    if (start < chunk.length) carry.push(chunk.subarray(start));
  }
  if (carry.length > 0) yield { bytes: concat(carry), terminated: false };
}

/**
 * Applies every record of the journal at `path`, reading it in chunks, one line at a time. A
 * last line that does not parse and has no newline, or NUL bytes where the crash left pages
 * unwritten, is a write torn by a crash (never acknowledged): it is cut off.
 * Anywhere else a bad line means the file is damaged, and opening it fails with a JournalError
 * naming the line; so does a record of a newer format.
 */
export async function replayJournal(files: FileAccess, path: string, apply: (record: DataRecord) => void): Promise<ReplayedJournal> {
  let source: AsyncIterable<Uint8Array> | null;
  try {
    source = await files.read(path);
  } catch (error) {
    throw new JournalError(`the journal ${path} cannot be read (${(error as Error).message}): check that this process may read it`, { cause: error });
  }
  if (source === null) return { size: 0, baseline: 0 };
  let offset = 0;
  let number = 0;
  let baseline = 0;
  let torn: { number: number; offset: number; error: unknown } | null = null;
  let unterminated = false;
  try {
    for await (const { bytes, terminated } of lines(source)) {
      number++;
      if (torn) throw damaged(path, torn.number, torn.error);
      let record: JournalRecord | null = null;
      try {
        const text = decoder.decode(bytes);
        record = text.trim() === "" ? null : (parseCanonical(text) as JournalRecord);
        if (record !== null && (typeof record !== "object" || typeof record.op !== "string")) throw new Error("not a journal record");
      } catch (error) {
        // An append ends with its newline, and reaches the disk whole before it is acknowledged.
        // A crash can leave the start of one (no newline), or its newline with the pages before
        // it unwritten (NUL bytes); a whole line that does not parse is damage, not a torn write.
        if (terminated && !bytes.includes(0)) throw damaged(path, number, error);
        torn = { number, offset, error };
        continue;
      }
      if (record && !OPS.has(record.op)) throw newer(path, number, `unknown record '${record.op}'`);
      if (record?.op === "format") {
        if (record.version > JOURNAL_FORMAT) throw newer(path, number, `format ${record.version}`);
      } else if (record?.op === "snapshot") {
        baseline = record.size;
      } else if (record) {
        try {
          apply(record);
        } catch (error) {
          throw damaged(path, number, error);
        }
      }
      offset += bytes.length + (terminated ? 1 : 0);
      unterminated = !terminated && bytes.length > 0;
    }
  } catch (error) {
    if (error instanceof JournalError) throw error;
    throw new JournalError(`the journal ${path} cannot be read (${(error as Error).message}) after line ${number}`, { cause: error });
  }
  if (torn) {
    // Silent would leave an operator wondering where a write went; it was never acknowledged.
    console.warn(`everest: the journal ${path} ended in an incomplete line ${torn.number} (a write a crash cut short, never acknowledged): cut off`);
    await files.truncate(path, torn.offset);
  }
  // A complete last record whose newline was lost: keep it, and end it so appends start a new line.
  else if (unterminated) {
    await files.append(path, "\n");
    offset++;
  }
  return { size: offset, baseline };
}

function damaged(path: string, line: number, cause: unknown): JournalError {
  return new JournalError(
    `the journal ${path} is damaged at line ${line} (${(cause as Error)?.message ?? cause}). ` +
      `A whole line is not a write a crash cut short (those are cut off by themselves), and it and any lines after it may hold acknowledged writes, so everest will not start from it and drop them: ` +
      `keep a copy of the file, then repair or remove line ${line} (or restore a backup) and start again.`,
    { cause },
  );
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class Journal {
  private pending: string[] = [];
  private waiters: Waiter[] = [];
  private flushQueued = false;
  /** Flushes, and the last step of a compaction, run one at a time, in order. */
  private tail: Promise<void> = Promise.resolve();
  private broken: DatabaseUnavailableError | null = null;
  /** Characters appended since the file was opened or last compacted, plus what it held then. */
  size: number;
  /** Lines appended while a compaction writes its snapshot, which the new file must end with. */
  private since: string[] | null = null;

  constructor(
    private readonly files: FileAccess,
    readonly path: string,
    private readonly lock: FileLock,
    size: number,
  ) {
    this.size = size;
  }

  /**
   * Set once a write to the file failed. What is on disk is then behind what was applied in
   * memory, so the driver refuses further work rather than serve unacknowledged state.
   */
  get failure(): DatabaseUnavailableError | null {
    return this.broken;
  }

  /** The line of a record, for append(); throws for a value the journal cannot hold. */
  encode(record: JournalRecord): string {
    return encodeRecord(record);
  }

  /** Queues a line (from encode); resolves when it is durably appended. */
  append(line: string): Promise<void> {
    if (this.broken) return Promise.reject(this.broken);
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.pending.push(line);
    this.since?.push(line);
    if (!this.flushQueued) {
      this.flushQueued = true;
      void this.enqueue(() => this.flush());
    }
    return done;
  }

  /**
   * From now on, appended lines are also kept for the file that will replace this one. Called
   * at the moment the snapshot is taken: every line appended before is in the snapshot.
   */
  beginReplacement(): void {
    this.since = [];
  }

  /** Forgets the kept lines: the replacement was abandoned and this file stays. */
  abandonReplacement(): void {
    this.since = null;
  }

  /**
   * Runs `finish(tail)` in turn with flushes, where `tail` is every line appended since
   * beginReplacement; once it has put the new file in place, lines still queued (all in `tail`)
   * are acknowledged without being appended again. A failure there with such lines breaks the
   * journal, since they then reached neither file for sure; without any, the old file is whole.
   */
  finishReplacement(finish: (tail: string) => Promise<number>): Promise<void> {
    return this.enqueue(async () => {
      if (this.broken) throw this.broken;
      const tail = (this.since ?? []).join("");
      this.since = null;
      const waiters = this.take();
      try {
        this.size = await finish(tail);
      } catch (error) {
        if (waiters.length === 0) throw error;
        throw this.fail(error, waiters);
      }
      for (const waiter of waiters) waiter.resolve();
    });
  }

  /** Resolves once every queued line has been written (or has failed). */
  async drain(): Promise<void> {
    await this.tail;
  }

  /** Waits for queued lines and gives up the file. */
  async close(): Promise<void> {
    await this.drain();
    await this.lock.release();
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
    const text = lines.join("");
    try {
      await this.files.append(this.path, text);
    } catch (error) {
      this.fail(error, waiters);
      return;
    }
    this.size += text.length;
    for (const waiter of waiters) waiter.resolve();
  }

  private take(): Waiter[] {
    const waiters = this.waiters;
    this.pending = [];
    this.waiters = [];
    return waiters;
  }

  private fail(error: unknown, waiters: Waiter[]): DatabaseUnavailableError {
    // The cause in the message: the log line is often all an operator has (EFBIG, ENOSPC, EPERM).
    this.broken = new DatabaseUnavailableError(`the journal ${this.path} could not be written (${(error as Error).message})`, { cause: error });
    for (const waiter of waiters) waiter.reject(this.broken);
    return this.broken;
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.tail.then(task);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
