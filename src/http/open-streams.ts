// The responses that stay open (the change feed's event streams), kept in one registry the App
// owns (docs/contracts.md §7): shutdown stops taking new ones and ends each open one with its
// final event before it waits for requests in flight, and the metrics endpoint counts them.

export interface OpenStream {
  /** Sends the stream's final event and closes it. */
  end(): Promise<void> | void;
}

export class OpenStreams {
  private readonly open = new Set<OpenStream>();
  private closed = false;

  get size(): number {
    return this.open.size;
  }

  /** False once shutdown has begun: no stream may start. */
  get accepting(): boolean {
    return !this.closed;
  }

  /** Registers a stream; false once shutdown has begun, and the stream must then not start (a 503). */
  add(stream: OpenStream): boolean {
    if (this.closed) return false;
    this.open.add(stream);
    return true;
  }

  /** A stream that ended by itself (its client left, it was dropped). */
  delete(stream: OpenStream): void {
    this.open.delete(stream);
  }

  /** Stops taking streams and ends every open one; a stream that fails to end is dropped all the same. */
  async close(): Promise<void> {
    this.closed = true;
    const streams = [...this.open];
    this.open.clear();
    await Promise.allSettled(streams.map(async (stream) => stream.end()));
  }
}
