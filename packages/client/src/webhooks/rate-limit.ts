import { Queue } from '../core/queue.js';

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
}

/**
 * The `rateLimit` of one URL: a token bucket that holds one token and gains one every
 * `1000 / perSecond` ms, so requests start at least that far apart and no one-second window
 * holds more than `perSecond` of them (one more where the window catches both ends). A request
 * that finds no token waits its turn, first come first served; none is dropped.
 *
 * Spacing counts from when the previous request actually started, not from when it was due: a
 * timer that fires late (a busy event loop) must not let the next ones catch up in a burst.
 */
export class RateLimit {
  readonly #interval: number;
  /** When the latest request was let through, on the monotonic clock. */
  #last = Number.NEGATIVE_INFINITY;
  readonly #waiting = new Queue<Waiter>();
  /**
   * One timer for the whole queue, for its first waiter. Not unref'd, like a retry's wait: the
   * deliveries waiting here are work the caller asked for, and `close()` clears it.
   */
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed: { reason: unknown } | undefined;

  constructor(perSecond: number) {
    this.#interval = 1000 / perSecond;
  }

  /**
   * Takes the token: `undefined` when a request may start now, else a promise that resolves when
   * its turn comes, or rejects with `close()`'s reason.
   */
  take(): Promise<void> | undefined {
    if (this.#closed) return Promise.reject(this.#closed.reason);
    if (this.#waiting.length === 0 && this.#grant(performance.now())) return undefined;
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      this.#schedule();
    });
  }

  /** Rejects every waiting request and every later one with `reason`. */
  close(reason: unknown): void {
    this.#closed = { reason };
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const waiter of this.#waiting.drain()) waiter.reject(reason);
  }

  #grant(now: number): boolean {
    if (now - this.#last < this.#interval) return false;
    this.#last = now;
    return true;
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#waiting.length === 0) return;
    const wait = Math.max(0, this.#last + this.#interval - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // Timers may fire a fraction of a millisecond early: then this waits again for the rest.
      if (this.#grant(performance.now())) this.#waiting.shift()!.resolve();
      this.#schedule();
    }, wait);
  }
}
