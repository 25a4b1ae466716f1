import type { AnalyticsError } from '../core/errors.js';

/** How long the failures of one kind stay quiet after one was written, in ms. */
const QUIET_FOR = 60_000;

/**
 * Writes failures nobody hears of to stderr, so that none goes unseen by default: the first of each
 * error code, then at most one per code per minute (a long outage must not flood the host's logs),
 * telling how many were left out since.
 */
export class UnheardFailures {
  readonly #label: string;
  readonly #write: (line: string) => void;
  readonly #now: () => number;
  /** Per error code: when its last line was written, and how many were left out since. */
  readonly #kinds = new Map<string, { at: number; skipped: number }>();

  constructor(label: string, write = (line: string) => console.error(line), now = Date.now) {
    this.#label = label;
    this.#write = write;
    this.#now = now;
  }

  report(error: AnalyticsError): void {
    const now = this.#now();
    const kind = this.#kinds.get(error.code);
    if (kind !== undefined && now - kind.at < QUIET_FOR) {
      kind.skipped += 1;
      return;
    }
    const skipped = kind?.skipped ? ` (${kind.skipped} more ${error.code} since the last line)` : '';
    this.#kinds.set(error.code, { at: now, skipped: 0 });
    this.#write(
      `batched-analytics [${this.#label}] ${error.code}: ${error.message}${skipped}. ` +
        'Listen to the `error` event, or set `logger` or `silent`; more of this kind within a minute are not shown.',
    );
  }
}
