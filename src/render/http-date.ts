// HTTP dates (RFC 1123, always GMT) for Last-Modified, Expires and If-Modified-Since. These
// headers ignore DATE_FORMAT, which only shapes dates inside bodies.

import { utcString } from "./dates.ts";

/** `Sat, 21 Nov 2026 11:23:48 GMT`. */
export function formatHttpDate(date: Date): string {
  return utcString(date);
}

/** Parses an HTTP date header; anything unparseable is treated as absent, as Werkzeug does. */
export function parseHttpDate(value: string | null | undefined): Date | null {
  if (!value) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time);
}
