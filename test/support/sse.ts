// Reading a text/event-stream response in tests: events as the HTML standard's parser makes
// them (event, id, data; comments and retry noted), one at a time, with a time limit so a
// missing event fails the test instead of hanging it.

export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

export interface SseReader {
  response: Response;
  /** The next event; rejects after `ms` without one. */
  next(ms?: number): Promise<SseEvent>;
  /** The next event's data parsed, checking its name. */
  expect(event: string, ms?: number): Promise<{ id?: string; data: any }>;
  /** Every event until the stream ends (the server closed it). */
  rest(ms?: number): Promise<SseEvent[]>;
  /** Whether nothing but comments arrives within `ms`. */
  quiet(ms: number): Promise<boolean>;
  /** Comments seen so far (heartbeats). */
  comments: string[];
  retry?: number;
  close(): Promise<void>;
}

const END = Symbol("end");

export function readSse(response: Response): SseReader {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const queue: Array<SseEvent | typeof END> = [];
  const waiting: Array<() => void> = [];
  const comments: string[] = [];
  let done = false;
  const out: SseReader = {
    response,
    comments,
    async next(ms = 5000) {
      const item = await take(ms);
      if (item === END) throw new Error("the stream ended");
      return item;
    },
    async expect(event, ms) {
      const got = await out.next(ms);
      if (got.event !== event) throw new Error(`expected a '${event}' event, got '${got.event}': ${got.data}`);
      return { id: got.id, data: JSON.parse(got.data) };
    },
    async rest(ms = 5000) {
      const events: SseEvent[] = [];
      for (;;) {
        const item = await take(ms);
        if (item === END) return events;
        events.push(item);
      }
    },
    async quiet(ms) {
      try {
        const item = await take(ms);
        if (item !== END) queue.unshift(item);
        return false;
      } catch {
        return true;
      }
    },
    async close() {
      await reader.cancel().catch(() => undefined);
    },
  };

  async function take(ms: number): Promise<SseEvent | typeof END> {
    const deadline = Date.now() + ms;
    while (queue.length === 0) {
      if (done) return END;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return queue.shift()!;
  }

  const wakeAll = () => {
    for (const wake of waiting.splice(0)) wake();
  };

  (async () => {
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        buffer += decoder.decode(value, { stream: true });
        let at: number;
        while ((at = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const event: SseEvent = { event: "message", data: "" };
          const data: string[] = [];
          let isEvent = false;
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line.slice(1).trim());
            else if (line.startsWith("retry:")) out.retry = Number(line.slice(6).trim());
            else if (line.startsWith("event:")) ((event.event = line.slice(6).trim()), (isEvent = true));
            else if (line.startsWith("id:")) ((event.id = line.slice(3).trim()), (isEvent = true));
            else if (line.startsWith("data:")) (data.push(line.slice(5).replace(/^ /, "")), (isEvent = true));
          }
          if (isEvent) {
            event.data = data.join("\n");
            queue.push(event);
          }
        }
        wakeAll();
      }
    } catch {
      // Cancelled.
    }
    done = true;
    queue.push(END);
    wakeAll();
  })();
  return out;
}
