// Request headers answered from the IncomingMessage node:http already parsed (adapters/node-request.ts):
// get() and has() read node's record; anything else, or any change, builds the real Headers first.
import type { IncomingMessage } from "node:http";

export function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}

// Names node:http keeps only the first value of, where Headers joins every value with ", ":
// these are read from the raw header list instead, to answer as Headers would. (Both join
// cookies with "; "; node's array of set-cookie values goes to the real Headers.)
const NOT_JOINED_BY_NODE = new Set([
  "age", "authorization", "content-length", "content-type", "etag", "expires", "from", "host", "if-modified-since", "if-unmodified-since",
  "last-modified", "location", "max-forwards", "proxy-authorization", "referer", "retry-after", "server", "user-agent",
]);

const trimmed = (value: string) => (value.length > 0 && (value.charCodeAt(0) <= 32 || value.charCodeAt(value.length - 1) <= 32) ? value.trim() : value);

/**
 * Request headers that answer get() and has() from the IncomingMessage node:http already parsed
 * (most of what a handler asks); anything else, or any change, builds the real Headers first
 * (as @hono/node-server does). Its prototype is Headers.prototype, so `instanceof Headers` holds.
 */
export class IncomingHeaders {
  #req: IncomingMessage;
  #native?: Headers;

  constructor(req: IncomingMessage) {
    this.#req = req;
  }

  get native(): Headers {
    return (this.#native ??= headersOf(this.#req));
  }

  get(name: string): string | null {
    if (this.#native) return this.#native.get(name);
    const lower = String(name).toLowerCase();
    if (!NOT_JOINED_BY_NODE.has(lower)) {
      const value = Object.hasOwn(this.#req.headers, lower) ? this.#req.headers[lower] : undefined;
      // Absent is the common answer (If-None-Match, Origin, CF-Connecting-IP …): building the
      // real Headers to say so cost more than the rest of a GET item's header reads.
      if (value === undefined) return null;
      return typeof value === "string" ? trimmed(value) : this.native.get(name);
    }
    const raw = this.#req.rawHeaders;
    let found: string | null = null;
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i]!.length === lower.length && raw[i]!.toLowerCase() === lower) found = found === null ? trimmed(raw[i + 1]!) : `${found}, ${trimmed(raw[i + 1]!)}`;
    }
    return found;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }
}
for (const name of Object.getOwnPropertyNames(Headers.prototype)) {
  if (name === "constructor" || name === "get" || name === "has") continue;
  const descriptor = Object.getOwnPropertyDescriptor(Headers.prototype, name)!;
  if (typeof descriptor.value !== "function") continue;
  const method = descriptor.value as (...args: unknown[]) => unknown;
  Object.defineProperty(IncomingHeaders.prototype, name, {
    value(this: IncomingHeaders, ...args: unknown[]) {
      return method.apply(this.native, args);
    },
    writable: true,
    configurable: true,
  });
}
Object.defineProperty(IncomingHeaders.prototype, Symbol.iterator, {
  value(this: IncomingHeaders) {
    return this.native[Symbol.iterator]();
  },
  configurable: true,
});
Object.setPrototypeOf(IncomingHeaders.prototype, Headers.prototype);
