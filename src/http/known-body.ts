// A Response whose body is bytes everest still holds: a server adapter that finds them here
// writes them as they are instead of reading them back through the body stream (on Node, that
// read cost more than the rest of a small response). A symbol from the global registry, so a
// second copy of this module (an adapter bundled apart from the handler) agrees on it.
const KNOWN_BODY = Symbol.for("everest.knownBody");

/** `new Response(bytes, init)`, with the bytes kept beside it for the adapter. */
export function bytesResponse(bytes: Uint8Array<ArrayBuffer> | null, init: ResponseInit): Response {
  const response = new Response(bytes, init);
  if (bytes) Object.defineProperty(response, KNOWN_BODY, { value: bytes });
  return response;
}

/** The bytes `bytesResponse` built the response from (undefined for any other response). */
export function knownBody(response: Response): Uint8Array<ArrayBuffer> | undefined {
  return (response as unknown as Record<symbol, Uint8Array<ArrayBuffer> | undefined>)[KNOWN_BODY];
}
