// Whole numbers a client writes in a header or query parameter, read strictly: digits only
// (no sign, exponent or fraction that Number() would take), at most 15 so they stay exact.
const DIGITS = /^\d{1,15}$/;

/** The number `text` names if it is a whole number from 1, else null. */
export function positiveWhole(text: string): number | null {
  const trimmed = text.trim();
  if (!DIGITS.test(trimmed)) return null;
  const value = Number(trimmed);
  return value >= 1 ? value : null;
}
