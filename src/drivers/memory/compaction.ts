// Background compaction of the memory driver's journal. When the file has outgrown the live data
// (longer than `ratio` × the last snapshot and than `minSize`), the current state is written,
// streaming, to a replacement file while writes go on being appended to the old file and
// acknowledged; the lines they add are kept and end the new file, which then takes the old one's
// place atomically. A crash at any point leaves one complete file: the old one until the rename,
// the new one after.
import type { FileAccess } from "../types.ts";
import { encodeRecord, FORMAT_LINE, type Journal } from "./journal.ts";

export interface CompactionPolicy {
  /** Compact when the journal is longer than this many times the last snapshot… */
  ratio: number;
  /** …and longer than this many bytes. */
  minSize: number;
}

export const DEFAULT_COMPACTION: CompactionPolicy = { ratio: 2, minSize: 4 * 1024 * 1024 };

/** How much of the snapshot is written at a time; writes are served between pieces. */
const PIECE = 1 << 20;

class Stopped extends Error {}

export class Compactor {
  private running: Promise<void> | null = null;
  private stopping = false;
  /** After a failed compaction, the size the journal must reach before another is tried. */
  private retryAbove = 0;

  constructor(
    private readonly files: FileAccess,
    private readonly journal: Journal,
    /** Called at the moment of the snapshot; yields its lines. */
    private readonly capture: () => Iterable<string>,
    private readonly policy: CompactionPolicy,
    /** The last snapshot's length (0: never compacted). */
    private baseline: number,
  ) {}

  /** Starts a compaction in the background if the journal has outgrown the live data. */
  check(): void {
    if (this.running || this.stopping || this.journal.failure) return;
    const size = this.journal.size;
    if (size <= this.policy.minSize || size <= this.policy.ratio * this.baseline || size <= this.retryAbove) return;
    this.run().catch((error: unknown) => {
      if (error instanceof Stopped) return;
      this.retryAbove = size + this.policy.minSize;
      // Nothing was lost (the old journal stays complete), but the operator should know why the file keeps growing.
      console.warn(`everest: compacting the journal ${this.journal.path} failed, will retry later: ${(error as Error).message}`);
    });
  }

  /** Compacts now, or joins the compaction under way. */
  run(): Promise<void> {
    if (this.stopping) return Promise.reject(new Error("the journal is closing"));
    this.running ??= this.compact().finally(() => (this.running = null));
    return this.running;
  }

  /** Abandons a compaction under way (the old file stays) and starts no other. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running?.catch(() => undefined);
  }

  private async compact(): Promise<void> {
    const replacement = await this.files.replacement(this.journal.path);
    // No await between the capture and beginReplacement: every line appended before is in the snapshot, every later one in the tail.
    const lines = this.capture();
    this.journal.beginReplacement();
    try {
      let written = 0;
      let piece = FORMAT_LINE;
      for (const line of lines) {
        piece += line;
        if (piece.length < PIECE) continue;
        await replacement.write(piece);
        written += piece.length;
        piece = "";
        if (this.stopping) throw new Stopped("the journal is closing");
        if (this.journal.failure) throw this.journal.failure;
      }
      written += piece.length;
      const marker = encodeRecord({ op: "snapshot", size: written });
      await replacement.write(piece + marker);
      await this.journal.finishReplacement(async (tail) => {
        if (tail) await replacement.write(tail);
        await replacement.commit();
        return written + marker.length + tail.length;
      });
      this.baseline = written;
    } catch (error) {
      this.journal.abandonReplacement();
      await replacement.discard();
      throw error;
    }
  }
}
