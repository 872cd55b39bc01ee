// What an endpoint hands to the renderer (src/render/respond.ts).

/** A JSON body in pieces: ASCII text and bytes written before (src/read/rendered.ts), in order. */
export type JsonPieces = Array<string | Uint8Array>;

export interface Reply {
  status: number;
  /** null: no body (204, 304), or a body given as `json`. */
  body: Record<string, unknown> | null;
  /**
   * The body already written as compact JSON (compactJson), by a method that knew the answer
   * would be written so (CallScope.compactJson): ASCII text and bytes, in order; `body` is then
   * null.
   */
  json?: JsonPieces;
  /** Unquoted; sent as the ETag header. */
  etag?: string;
  lastModified?: Date;
  headers?: Record<string, string>;
  /** A finished response (media downloads) that bypasses rendering. */
  raw?: Response;
}
