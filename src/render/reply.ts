// What an endpoint hands to the renderer (src/render/respond.ts).

export interface Reply {
  status: number;
  /** null: no body (204, 304), or a body given as `json`. */
  body: Record<string, unknown> | null;
  /**
   * The body already written as compact JSON (compactJson), as bytes, by a method that knew
   * the answer would be written so (CallScope.compactJson); `body` is then null.
   */
  json?: Uint8Array<ArrayBuffer>;
  /** `json` as text, where kept: what a Response is made of where nothing asks for plain parts (only asked then). */
  text?: () => string;
  /** Unquoted; sent as the ETag header. */
  etag?: string;
  lastModified?: Date;
  headers?: Record<string, string>;
  /** A finished response (media downloads) that bypasses rendering. */
  raw?: Response;
}
