import { DeliveryError, HttpError } from '../core/errors.js';
import { displayUrl } from './settings.js';

/** Why one receiver did not take a message. */
export interface WebhookFailure {
  /** Position of the receiver in `settings.webhooks`. */
  index: number;
  url: string;
  /** An `HttpError` (a `RedirectError` for a 3xx), `TimeoutError` or `NetworkError`. */
  error: DeliveryError;
}

/**
 * No receiver answered 2xx. Lists each receiver's latest failure; retryable while at least one of
 * them failed in a way that may heal (timeout, network error, 3xx, 5xx, 408, 429).
 */
export class WebhookError extends DeliveryError {
  /** The latest failure of every receiver, in settings order. */
  readonly failures: readonly WebhookFailure[];
  /** The longest `Retry-After` a retryable receiver asked for, in ms; absent when none did. */
  readonly retryAfter: number | undefined;

  /**
   * @param failures every receiver's latest failure.
   * @param retryAfter when the next attempt may go out, in ms, if the receivers set it (they all back off).
   */
  constructor(failures: readonly WebhookFailure[], retryAfter?: number) {
    const summary = failures.map(({ url, error }) => `${displayUrl(url)}: ${error.message}`).join('; ');
    super(`No webhook accepted the message (${summary})`, { code: 'ERR_WEBHOOK' });
    this.failures = failures;
    const waits = failures.flatMap(({ error }) =>
      error instanceof HttpError && error.retryable && error.retryAfter !== undefined ? [error.retryAfter] : [],
    );
    this.retryAfter = retryAfter ?? (waits.length > 0 ? Math.max(...waits) : undefined);
  }

  /** Receivers that failed for good are not asked again, so one retryable failure is enough. */
  override get retryable(): boolean {
    return this.failures.some(({ error }) => error.retryable);
  }
}

/**
 * A receiver got no request in this attempt: it failed `breakerThreshold` times in a row and backs
 * off until `retryAfter` ms from now. Retryable: the receiver may heal.
 */
export class BackingOffError extends DeliveryError {
  /** Wait until the receiver gets its next (probe) request, in ms. */
  readonly retryAfter: number;

  constructor(retryAfter: number, cause?: DeliveryError) {
    super(
      `Not sent: the URL is backing off after repeated failures${cause ? ` (latest: ${cause.message})` : ''}; next try in ${retryAfter} ms`,
      { code: 'ERR_BACKING_OFF', cause },
    );
    this.retryAfter = retryAfter;
  }

  override get retryable(): boolean {
    return true;
  }
}

/**
 * A receiver answered with a redirect (3xx). It is not followed: the signed body would go to a URL
 * nobody configured, with the signature and the URL's headers. Retryable, as Svix and Convoy do: a
 * redirect is a receiver moved or misconfigured (http to https, a trailing slash), which its owner
 * fixes, not a refusal of this message.
 */
export class RedirectError extends HttpError {
  override get retryable(): boolean {
    return true;
  }
}

/** How a request's failure counts: a receiver's 3xx is a {@link RedirectError}, any other as it is. */
export function failureOf(error: Error): Error {
  return error instanceof HttpError && error.status >= 300 && error.status < 400 ? new RedirectError(error.status, error.body, error.retryAfter) : error;
}
