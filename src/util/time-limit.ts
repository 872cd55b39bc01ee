// A wait with a bound: readiness probes (HEALTH_TIMEOUT) and the shutdown's drain
// (SHUTDOWN_TIMEOUT) give up on what does not settle in time.

/** What `work` resolves to, or `late` when `ms` pass first. */
export function timeLimit<T>(work: Promise<T>, ms: number, late: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
