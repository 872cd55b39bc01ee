// The Server-Sent Events wire format (the HTML standard's text/event-stream): what the feed
// writes, and how it reads the Accept header that asks for it.

const ENCODER = new TextEncoder();

export const EVENT_STREAM = "text/event-stream";

/** One event: `event:`, `id:` when it has a position, one `data:` line (`json` holds no raw newline). */
export function sseEvent(event: string, json: string, id?: string): Uint8Array {
  return ENCODER.encode(`event: ${event}\n${id !== undefined ? `id: ${id}\n` : ""}data: ${json}\n\n`);
}

/** The reconnection delay a client should use, and a comment so the client sees the stream open at once. */
export function sseOpening(retryMs: number): Uint8Array {
  return ENCODER.encode(`retry: ${retryMs}\n: everest change feed\n\n`);
}

/** A comment line: ignored by every client, but traffic for proxies that close idle connections. */
export const HEARTBEAT = ENCODER.encode(": heartbeat\n\n");

/**
 * Whether an Accept header asks for an event stream: it names text/event-stream with a non-zero
 * quality (EventSource sends exactly `text/event-stream`). A wildcard does not count, so a
 * client that accepts anything still gets JSON.
 */
export function wantsEventStream(accept: string | null): boolean {
  if (!accept || !accept.includes("event-stream")) return false;
  return accept.split(",").some((part) => {
    const [type, ...params] = part.split(";");
    if (type!.trim().toLowerCase() !== EVENT_STREAM) return false;
    const q = params.map((p) => p.trim().split("=")).find(([key]) => key === "q");
    return !q || Number(q[1]) > 0;
  });
}
