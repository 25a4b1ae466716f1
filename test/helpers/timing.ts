// Yardsticks for the few tests whose point is a real-time bound (a rate limit, a timeout): on a busy
// machine every timer of this process fires late by about as much as the code's own timers do, so
// a bound measured against a baseline timer in the same run holds under load and still catches code
// that waited for something else.

/**
 * Starts a baseline timer of `ms` now, beside the operation a test times.
 * @returns how late it fired, in ms (0 or more), once it has.
 */
export function lateness(ms: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => setTimeout(() => resolve(Math.max(0, performance.now() - started - ms)), ms));
}

/**
 * Runs a chain of `interval`-ms timers, each set when the one before fired, as a paced sender's
 * own timers are, until `stop()`.
 * @returns on `stop()`, each timer's lateness in ms.
 */
export function latenessChain(interval: number): { stop: () => number[] } {
  const late: number[] = [];
  let timer: ReturnType<typeof setTimeout>;
  const next = () => {
    const set = performance.now();
    timer = setTimeout(() => {
      late.push(Math.max(0, performance.now() - set - interval));
      next();
    }, interval);
  };
  next();
  return {
    stop: () => {
      clearTimeout(timer);
      return late;
    },
  };
}
