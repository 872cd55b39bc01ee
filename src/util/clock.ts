// The one clock of writes.

/** Now, to the second: Eve stores dates without sub-second precision. */
export function now(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000);
}
