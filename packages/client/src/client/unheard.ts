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

/**
 * Writes failures nobody hears of to stderr, so that none goes unseen by default: the first of each
 * error code, then at most one per code per minute (a long outage must not flood the host's logs),
 * telling how many were left out since.
 */
export class UnheardFailures {
  readonly #label: string;
  readonly #write: (line: string) => void;
  readonly #throttle: Throttle;

  constructor(label: string, write = (line: string) => console.error(line), now = Date.now) {
    this.#label = label;
    this.#write = write;
    this.#throttle = new Throttle(QUIET_FOR, now);
  }

  report(error: AnalyticsError, unheard: Unheard): void {
    const skipped = this.#throttle.admit(error.code);
    if (skipped === undefined) return;
    const since = skipped > 0 ? ` (${skipped} more ${error.code} since the last line)` : '';
    this.#write(
      `batched-analytics [${this.#label}] ${error.code}: ${error.message}${since}. ` +
        `${LISTEN[unheard]}, or set \`logger\` or \`silent\`; more of this kind within a minute are not shown.`,
    );
  }
}
