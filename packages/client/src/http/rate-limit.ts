import { HttpError, RateLimitError } from '../core/errors.js';
import { sleep } from './retry.js';

/**
 * Shortest pause: a `Retry-After: 0` (or a date already past) would otherwise send again at once,
 * over and over, without spending a retry.
 */
const MIN_PAUSE = 1_000;

/**
 * A pause shared by every batch of one client: once the service answers 429 or 503 with
 * `Retry-After`, no request starts before the time it gave. Waiting spends no retry: the service
 * said when to come back, nothing is wrong with the batch. A run of such answers, from the first
 * since the last success, may last at most `maxDuration` ms.
 */
export class RateLimit {
  readonly #maxDuration: number;
  /** `Date.now()` before which no request may start; 0 while the service accepts. */
  #until = 0;
  /** When the current run of refusals began; 0 while the service accepts. */
  #since = 0;
  /** The status of the last refusal, for the error once the run lasts too long. */
  #status = 0;

  constructor(maxDuration: number) {
    this.#maxDuration = maxDuration;
  }

  /** Whether a request must first {@link wait}: the only cost on the path of a healthy service. */
  get active(): boolean {
    return this.#until !== 0;
  }

  /**
   * Records `error` when it asks the client to pause (429 or 503 with `Retry-After`).
   * @returns the pause in ms from now; undefined when `error` is not such an answer.
   */
  pause(error: unknown, now = Date.now()): { delay: number; until: number; status: number } | undefined {
    if (!(error instanceof HttpError) || error.retryAfter === undefined || (error.status !== 429 && error.status !== 503)) {
      return undefined;
    }
    if (this.#since === 0) this.#since = now;
    this.#until = Math.max(this.#until, now + Math.max(MIN_PAUSE, error.retryAfter));
    this.#status = error.status;
    return { delay: this.#until - now, until: this.#until, status: error.status };
  }

  /** The service accepted a request: the run of refusals is over. */
  resume(): void {
    this.#until = 0;
    this.#since = 0;
  }

  /**
   * Resolves once requests may start again.
   * @throws {RateLimitError} when the pause would end more than `maxDuration` after the run began:
   * waiting for it would only fail later.
   * @throws the signal's reason once it aborts.
   */
  async wait(signal: AbortSignal): Promise<void> {
    // Another batch may extend the pause while this one sleeps: check again on waking.
    for (let now = Date.now(); this.#until > now; now = Date.now()) {
      if (this.#until - this.#since > this.#maxDuration) throw new RateLimitError(this.#status, this.#maxDuration);
      await sleep(this.#until - now, signal);
    }
  }
}
