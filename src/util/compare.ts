// Comparing secrets (passwords, tokens, API key digests).

const encoder = new TextEncoder();

/**
 * Equality whose running time depends on the lengths only, never on where the strings differ,
 * so a caller cannot find a secret one character at a time by timing the answers.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  const length = Math.max(x.length, y.length);
  let diff = x.length ^ y.length;
  for (let i = 0; i < length; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}
