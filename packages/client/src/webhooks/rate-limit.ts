import { Queue } from '../core/queue.js';

/** How late a turn may be, in ms, and still keep the pace rather than restart it. */
const TIMER_SLACK = 2;

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
}

/**
 * The `rateLimit` of one URL: a token bucket that holds one token and gains one every
 * `1000 / perSecond` ms, so requests start on a steady pace of `perSecond` and no one-second
 * window holds more than `perSecond` of them, give or take one. A request that finds no token
 * waits its turn, first come first served; none is dropped.
 *
 * Timers fire late: by a millisecond or so always (timers count whole milliseconds), which would
 * slow the pace below `perSecond`, so a turn that late keeps the pace; by more when the event loop
 * was busy, and then the pace restarts from now, so the ones waiting do not catch up in a burst
 * that the receiver would see.
 */
export class RateLimit {
  readonly #interval: number;
  /** When the latest request was due (or let through, when it was far late), on the monotonic clock. */
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
    const due = this.#last + this.#interval;
    if (now < due) return false;
    this.#last = now - due <= Math.min(TIMER_SLACK, this.#interval) ? due : now;
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
