// A response everest rendered itself: status, plain headers and the body it still holds. A server
// adapter that finds them writes them as they are instead of reading a Response back through
// its Headers and body stream (on Node, that read cost more than the rest of a small response).
//
// An adapter that can write those parts directly says so on the Request it hands the handler
// (`PLAIN_RESPONSE_WANTED`); it then gets an object whose prototype is Response.prototype and
// whose real Response (undici's, with a body stream and a Headers) is only built if anything
// asks for more than the parts (a hook reading the body, a test, …). Everywhere else it is an
// ordinary `new Response`, marked with nothing: a property defined on a Deno Response cost 0.9-1.2
// µs, 5% of a GET item there, for an adapter that never reads it. Symbols from the global
// registry, so a second copy of this module (an adapter bundled apart from the handler) agrees on them.
const PARTS = Symbol.for("everest.responseParts");
export const PLAIN_RESPONSE_WANTED = Symbol.for("everest.plainResponseWanted");

/** Header names in lower case, as Headers would hold them, so a later set replaces an earlier one. */
export type PlainHeaders = Record<string, string>;

/** A body as rendered: text (ASCII, so its length is its Content-Length) or bytes. */
export type KnownBody = Uint8Array<ArrayBuffer> | string;

export interface ResponseParts {
  status: number;
  headers: PlainHeaders;
  body: KnownBody | null;
  /** The Response built on first use of anything else; once it exists it is what counts. */
  response?: Response;
}

type Carrier = { [PARTS]?: ResponseParts };

function materialise(parts: ResponseParts): Response {
  parts.response ??= new Response(parts.body, { status: parts.status, headers: parts.headers });
  return parts.response;
}

// status and ok from the parts; every other member of Response.prototype forwarded to the
// Response built on first use. `instanceof Response` holds.
const plainPrototype: object = Object.create(Response.prototype, {
  status: {
    get(this: Carrier) {
      return this[PARTS]!.status;
    },
  },
  ok: {
    get(this: Carrier) {
      const status = this[PARTS]!.status;
      return status >= 200 && status < 300;
    },
  },
  [Symbol.toStringTag]: { value: "Response" },
});
for (const name of Object.getOwnPropertyNames(Response.prototype)) {
  if (name === "constructor" || Object.hasOwn(plainPrototype, name)) continue;
  const descriptor = Object.getOwnPropertyDescriptor(Response.prototype, name)!;
  if (typeof descriptor.value === "function") {
    const method = descriptor.value as (...args: unknown[]) => unknown;
    Object.defineProperty(plainPrototype, name, {
      value(this: Carrier, ...args: unknown[]) {
        return method.apply(materialise(this[PARTS]!), args);
      },
      writable: true,
      configurable: true,
    });
  } else if (descriptor.get) {
    Object.defineProperty(plainPrototype, name, {
      get(this: Carrier) {
        return (materialise(this[PARTS]!) as unknown as Record<string, unknown>)[name];
      },
      configurable: true,
    });
  }
}

/**
 * A response of a known body: plain parts where the request's adapter wants them, a Response
 * otherwise, made of `text` where given (`body` as text): Deno's Response copies bytes it is
 * given and not a string, 0.6 µs of a GET item's 16 (bench/README.md, issue 36).
 */
export function knownResponse(request: Request, body: KnownBody | null, status: number, headers: PlainHeaders, text?: () => string): Response {
  if ((request as unknown as Record<symbol, unknown>)[PLAIN_RESPONSE_WANTED] === true) return plainResponse({ status, headers, body });
  return new Response(text ? text() : body, { status, headers });
}

/** A plain response of these parts (for a request whose adapter wants them). */
export function plainResponse(parts: ResponseParts): Response {
  const plain = Object.create(plainPrototype) as Carrier;
  plain[PARTS] = parts;
  return plain as unknown as Response;
}

/** The parts of a plain response nothing has turned into a real Response yet. */
export function responseParts(response: Response): ResponseParts | undefined {
  const parts = (response as unknown as Carrier)[PARTS];
  return parts && !parts.response ? parts : undefined;
}

/** The body of a plain response, real Response built or not (undefined for any other response). */
export function knownBody(response: Response): KnownBody | undefined {
  return (response as unknown as Carrier)[PARTS]?.body ?? undefined;
}
