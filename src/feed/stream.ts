// One open stream: the events its subscriber is owed, written in order to a ReadableStream whose
// queue is bounded in bytes. A reader that stops reading fills the queue and is then dropped
// with a final event, so a stalled client holds at most CHANGE_FEED_BUFFER bytes; a client that
// goes away cancels the stream, which frees everything it held.
import type { ChangeRecord } from "../drivers/types.ts";
import { HEARTBEAT, sseEvent } from "./sse.ts";

/** Changes waiting to be rendered, past which a subscriber is as slow as one whose buffer is full. */
const PENDING_LIMIT = 10_000;

/** Why a stream ended, as its final `end` event says. */
export type EndReason = "shutdown" | "slow reader" | "expired" | "error";

export class FeedStream {
  readonly body: ReadableStream<Uint8Array>;
  /** The position of the last change this stream has been given (or its starting one). */
  position: string;
  ended = false;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private pending: ChangeRecord[] = [];
  private draining = false;
  /** Events rendered but not yet enqueued, and their size. */
  private chunk: Uint8Array[] = [];
  private chunkBytes = 0;
  private idle = true;
  private readonly onEnd: Array<() => void> = [];

  constructor(
    position: string,
    opening: Uint8Array,
    private readonly render: (record: ChangeRecord) => Uint8Array | null | Promise<Uint8Array | null>,
    private readonly bufferBytes: number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.position = position;
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
          controller.enqueue(opening);
        },
        cancel: () => this.finish(),
      },
      // Counted in bytes, with no queue wanted: desiredSize is minus what the reader has not taken.
      new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
    );
  }

  /** Called once when the stream ends, however it ends. */
  whenEnded(callback: () => void): void {
    if (this.ended) callback();
    else this.onEnd.push(callback);
  }

  /** Changes after this stream's position, in order; each is rendered for the subscriber and written. */
  accept(records: readonly ChangeRecord[]): void {
    if (this.ended || records.length === 0) return;
    for (const record of records) this.pending.push(record);
    this.position = records[records.length - 1]!.position;
    if (this.pending.length > PENDING_LIMIT) return this.end("slow reader");
    if (!this.draining) void this.drain();
  }

  /** A comment, for a stream that wrote nothing since the last one. */
  heartbeat(): void {
    if (!this.ended && this.idle && this.pending.length === 0) this.write(HEARTBEAT);
    this.idle = true;
  }

  /** The position is older than the log keeps: `reset` names where to start again, and the stream ends. */
  reset(head: string): void {
    if (this.ended) return;
    this.pending = [];
    this.write(sseEvent("reset", JSON.stringify({ reason: "expired" }), head));
    this.close();
  }

  /** Ends the stream with a final `end` event that says why (by default, the server shutting down). */
  end(reason: EndReason = "shutdown"): void {
    if (this.ended) return;
    this.pending = [];
    this.write(sseEvent("end", JSON.stringify({ reason })), true);
    this.close();
  }

  /** Renders the pending changes in order; synchronously while rendering is, so a batch becomes one chunk. */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      let next = 0;
      while (next < this.pending.length && !this.ended) {
        const rendering = this.render(this.pending[next++]!);
        const bytes = rendering instanceof Promise ? await rendering : rendering;
        if (bytes && !this.ended) this.write(bytes);
      }
    } catch (error) {
      this.onError(error);
      this.end("error");
    } finally {
      this.pending = [];
      this.draining = false;
      this.flush();
    }
  }

  /**
   * Adds an event to the chunk being made, unless the reader is too far behind, which ends the
   * stream (`final` bytes always go). The chunk is enqueued once the changes at hand are
   * rendered: one write to the socket for a batch, not one per event.
   */
  private write(bytes: Uint8Array, final = false): void {
    if (this.ended) return;
    this.idle = false;
    const queued = -(this.controller.desiredSize ?? 0) + this.chunkBytes;
    if (!final && queued + bytes.byteLength > this.bufferBytes) return this.end("slow reader");
    this.chunk.push(bytes);
    this.chunkBytes += bytes.byteLength;
    if (final || !this.draining) this.flush();
  }

  private flush(): void {
    if (this.chunk.length === 0) return;
    const parts = this.chunk;
    this.chunk = [];
    let bytes = parts[0]!;
    if (parts.length > 1) {
      bytes = new Uint8Array(this.chunkBytes);
      let at = 0;
      for (const part of parts) {
        bytes.set(part, at);
        at += part.byteLength;
      }
    }
    this.chunkBytes = 0;
    try {
      this.controller.enqueue(bytes);
    } catch {
      // Cancelled by the client meanwhile.
    }
  }

  private close(): void {
    if (this.ended) return;
    this.flush();
    try {
      this.controller.close();
    } catch {
      // Already cancelled by the client.
    }
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.pending = [];
    for (const callback of this.onEnd.splice(0)) callback();
  }
}
