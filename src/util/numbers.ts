// Whole numbers a client writes in a header or query parameter, read strictly: digits only
// (no sign, exponent or fraction that Number() would take).
const DIGITS = /^\d+$/;

/**
 * The number `text` names if it is a whole number from 1, else null. Past 2^53 - 1 it is taken
 * as that: every caller cuts it to a limit far below, and a larger number is still a whole one
 * (`max_results=99999999999999999999` is cut to the page limit, not refused).
 */
export function positiveWhole(text: string): number | null {
  const trimmed = text.trim();
  if (!DIGITS.test(trimmed)) return null;
  const value = Math.min(Number(trimmed), Number.MAX_SAFE_INTEGER);
  return value >= 1 ? value : null;
}
