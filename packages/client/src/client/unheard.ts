import type { AnalyticsError } from '../core/errors.js';
import { Throttle } from '../core/throttle.js';

/** How long the failures of one kind stay quiet after one was written, in ms. */
const QUIET_FOR = 60_000;

/**
 * What would have heard a failure, named in its line: a drop is no `error` event, so an `error`
 * listener does not hear it.
 */
const LISTEN = {
  error: 'Listen to the `error` event',
  drop: 'Listen to the `drop` event or pass the call a callback',
} as const;

/** How a failure is told to the app: an `error` event, or a dropped call's `drop` event and callback. */
export type Unheard = keyof typeof LISTEN;

/** A failure held back, written when its code's minute ends (or at close) with how many were. */
interface Held {
  error: AnalyticsError;
  unheard: Unheard;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Writes failures nobody hears of to stderr, so that none goes unseen by default: the first of each
 * error code at once; those within the next minute are held back (a long outage must not flood the
 * host's logs), and when it ends, or when the client closes, the latest is written with how many
 * there were. Its timers do not keep a process alive.
 */
export class UnheardFailures {
  readonly #label: string;
  readonly #write: (line: string) => void;
  readonly #throttle: Throttle;
  readonly #held = new Map<string, Held>();

  constructor(label: string, write = (line: string) => console.error(line), now = Date.now) {
    this.#label = label;
    this.#write = write;
    this.#throttle = new Throttle(QUIET_FOR, now);
  }

  report(error: AnalyticsError, unheard: Unheard): void {
    const code = error.code;
    if (this.#throttle.admit(code) !== undefined) {
      this.#line(error, unheard, '');
      return;
    }
    const timer = this.#held.get(code)?.timer ?? setTimeout(() => this.#release(code), this.#throttle.endsIn(code)).unref();
    this.#held.set(code, { error, unheard, timer });
  }

  /** Writes what is held back now: the client closes. */
  close(): void {
    for (const [code, { timer }] of this.#held) {
      clearTimeout(timer);
      this.#release(code);
    }
  }

  #release(code: string): void {
    const { error, unheard } = this.#held.get(code)!;
    this.#held.delete(code);
    this.#line(error, unheard, ` (${this.#throttle.release(code)} of this code in the last minute, this the latest)`);
  }

  #line(error: AnalyticsError, unheard: Unheard, count: string): void {
    this.#write(
      `batched-analytics [${this.#label}] ${error.code}: ${error.message}${count}. ` +
        `${LISTEN[unheard]}, or set \`logger\` or \`silent\`; more of this kind within a minute are counted in one line.`,
    );
  }
}
