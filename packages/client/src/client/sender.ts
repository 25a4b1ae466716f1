import { withSentAt } from './batch.js';
import { base64 } from '../platform/bytes.js';
import type { Connection } from '../http/connection.js';
import type { Emitter } from '../core/emitter.js';
import { ConfigError, DeliveryError, HttpError, NetworkError } from '../core/errors.js';
import type { AnalyticsEvents } from './events.js';
import type { ClientLog } from './logger.js';
import type { ResolvedOptions } from './options.js';
import { CAN_GZIP, gzip } from '../platform/gzip.js';
import { allowListeners } from '../platform/listeners.js';
import { openConnection } from '../http/open-connection.js';
import { RateLimit } from '../http/rate-limit.js';
import { type RetryPolicy, withRetry } from '../http/retry.js';
import { RUNTIME } from '../platform/runtime.js';
import { post } from '../http/transport.js';
import { VERSION } from '../core/version.js';

/** How one batch ended: the body last sent (its `sentAt` renewed by retries) and the final error, if any. */
export interface SendOutcome {
  body: Uint8Array;
  attempts: number;
  error?: DeliveryError;
}

/**
 * Sends request bodies to the endpoint with retries, over the client's own keep-alive agent (or
 * the user's dispatcher), and reports each attempt (`request`, `response`, `retry`, `rate-limit`
 * events and log lines). A rate limit pauses every batch of the client, not only the one refused.
 * One abort signal ends every attempt, retry wait and pause: the `close()` deadline.
 */
export class BatchSender {
  readonly #options: ResolvedOptions;
  readonly #headers: Record<string, string>;
  readonly #policy: RetryPolicy;
  readonly #rateLimit: RateLimit;
  readonly #connection: Connection;
  readonly #abort = new AbortController();
  readonly #events: Emitter<AnalyticsEvents>;
  readonly #log: ClientLog;

  /**
   * @param writeKey sent as the basic-auth user.
   * @throws {ConfigError} naming `gzip` when it is asked for and this runtime cannot compress.
   */
  constructor(writeKey: string, options: ResolvedOptions, events: Emitter<AnalyticsEvents>, log: ClientLog) {
    if (options.gzip && !CAN_GZIP) {
      throw new ConfigError('gzip', 'Expected `gzip` to be false here: this runtime has neither node:zlib nor CompressionStream');
    }
    this.#options = options;
    this.#events = events;
    this.#log = log;
    this.#headers = {
      authorization: `Basic ${base64(`${writeKey}:`)}`,
      'content-type': 'application/json',
      'user-agent': `batched-analytics/${VERSION} (${RUNTIME})`,
      ...(options.gzip ? { 'content-encoding': 'gzip' } : {}),
    };
    this.#policy = { retries: options.maxRetries, minDelay: options.minRetryDelay, maxDelay: options.maxRetryDelay };
    this.#rateLimit = new RateLimit(options.maxRateLimitDuration);
    this.#connection = openConnection({ connections: options.maxInFlight, dispatcher: options.dispatcher, proxy: options.proxy, fetch: options.fetch });
    // Each batch in flight listens to the abort signal once (its request, retry wait or pause): raise
    // Node's leak warning past that bound, not past its default of 10.
    allowListeners(Math.max(10, options.maxInFlight + 1), this.#abort.signal);
  }

  /**
   * Sends one body of `count` messages, retrying within the policy, and waiting out the service's
   * rate limits without spending retries. Never rejects.
   */
  async send(body: Uint8Array, count: number): Promise<SendOutcome> {
    const signal = this.#abort.signal;
    let attempts = 0;
    this.#log.debug('sending %d messages (%d bytes)', count, body.length);
    try {
      const status = await withRetry(
        async () => {
          for (;;) {
            const paused = this.#rateLimit.active;
            if (paused) await this.#rateLimit.wait(signal);
            attempts += 1;
            // A body built before a wait would tell the service a stale `sentAt`, and skew the
            // timestamps it corrects with it.
            if (attempts > 1 || paused) body = withSentAt(body, new Date());
            try {
              const status = await this.#attempt(body, count, attempts);
              this.#rateLimit.resume();
              return status;
            } catch (error) {
              const pause = this.#rateLimit.pause(error);
              if (pause === undefined) throw error;
              this.#log.warn('rate limited (status %d): every batch waits %d ms', pause.status, pause.delay);
              this.#events.emit('rate-limit', { count, ...pause, until: new Date(pause.until), error: error as HttpError });
            }
          }
        },
        this.#policy,
        {
          signal,
          onRetry: ({ error, delay }) => {
            this.#log.warn('attempt %d of %d messages failed (%s); retrying in %d ms', attempts, count, error.message, delay);
            this.#events.emit('retry', { count, attempt: attempts, delay, error });
          },
        },
      );
      this.#log.debug('delivered %d messages: status %d after %d attempt(s)', count, status, attempts);
      return { body, attempts };
    } catch (cause) {
      const error = asDeliveryError(cause);
      this.#log.error('gave up on %d messages after %d attempt(s): %s', count, attempts, error.message);
      return { body, attempts, error };
    }
  }

  /** One HTTP attempt, told to `request` and `response` listeners. */
  async #attempt(body: Uint8Array, count: number, attempt: number): Promise<number> {
    const { url } = this.#options;
    const sent = this.#options.gzip ? await gzip(body) : body;
    // Payloads and clock reads only for listeners: the common case pays one lookup.
    const observed = this.#events.has('response');
    if (this.#events.has('request')) this.#events.emit('request', { attempt, count, bytes: sent.length, url });
    const started = observed ? performance.now() : 0;
    try {
      const status = await post({
        url,
        body: sent,
        headers: this.#headers,
        timeout: this.#options.timeout,
        signal: this.#abort.signal,
        connection: this.#connection,
      });
      if (observed) this.#events.emit('response', { attempt, count, status, durationMs: performance.now() - started });
      return status;
    } catch (error) {
      if (observed) {
        const failure = asDeliveryError(error);
        const status = failure instanceof HttpError ? failure.status : undefined;
        this.#events.emit('response', { attempt, count, status, durationMs: performance.now() - started, error: failure });
      }
      throw error;
    }
  }

  /** Ends every attempt and retry wait in progress with `reason` (the `close()` deadline). */
  abort(reason: DeliveryError): void {
    this.#abort.abort(reason);
  }

  /**
   * Releases the client's own connections, at once: every batch has settled by now, and what they
   * may still be doing is reading the rest of a 2xx body nobody needs.
   */
  async close(): Promise<void> {
    await this.#connection.close(true);
  }
}

function asDeliveryError(error: unknown): DeliveryError {
  return error instanceof DeliveryError ? error : new NetworkError(String(error), error);
}
