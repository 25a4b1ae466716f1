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
 * the user's dispatcher), and reports each attempt (`request`, `response`, `retry` events and log
 * lines). One abort signal ends every attempt and retry wait: the `close()` deadline.
 */
export class BatchSender {
  readonly #options: ResolvedOptions;
  readonly #headers: Record<string, string>;
  readonly #policy: RetryPolicy;
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
    this.#connection = openConnection({ connections: options.maxInFlight, dispatcher: options.dispatcher, fetch: options.fetch });
    // Each batch in flight listens to the abort signal once (its request or its retry wait): raise
    // Node's leak warning past that bound, not past its default of 10.
    allowListeners(Math.max(10, options.maxInFlight + 1), this.#abort.signal);
  }

  /** Sends one body of `count` messages, retrying within the policy. Never rejects. */
  async send(body: Uint8Array, count: number): Promise<SendOutcome> {
    const { url } = this.#options;
    const signal = this.#abort.signal;
    let attempts = 0;
    this.#log.debug('sending %d messages (%d bytes)', count, body.length);
    try {
      const status = await withRetry(
        async (attempt) => {
          attempts = attempt;
          if (attempt > 1) body = withSentAt(body, new Date());
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
              signal,
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
        },
        this.#policy,
        {
          signal,
          onRetry: ({ attempt, error, delay }) => {
            this.#log.warn('attempt %d of %d messages failed (%s); retrying in %d ms', attempt, count, error.message, delay);
            this.#events.emit('retry', { count, attempt, delay, error });
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

  /** Whether {@link abort} was called. */
  get aborted(): boolean {
    return this.#abort.signal.aborted;
  }

  /** Ends every attempt and retry wait in progress with `reason` (the `close()` deadline). */
  abort(reason: DeliveryError): void {
    this.#abort.abort(reason);
  }

  /** Releases the client's own connections: gracefully, or at once after an abort. */
  async close(): Promise<void> {
    await this.#connection.close(this.aborted);
  }
}

function asDeliveryError(error: unknown): DeliveryError {
  return error instanceof DeliveryError ? error : new NetworkError(String(error), error);
}
