// What an endpoint hands to the renderer (src/render/respond.ts).

export interface Reply {
  status: number;
  /** null: no body (204, 304). */
  body: Record<string, unknown> | null;
  /** Unquoted; sent as the ETag header. */
  etag?: string;
  lastModified?: Date;
  headers?: Record<string, string>;
  /** A finished response (media downloads) that bypasses rendering. */
  raw?: Response;
}
