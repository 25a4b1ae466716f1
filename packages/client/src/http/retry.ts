import pRetry from 'p-retry';
import { DeliveryError } from '../core/errors.js';
import { MAX_DELAY } from '../core/validate.js';

/** How a failed delivery is retried. Durations in ms. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  /** Delay before the first retry; doubles on each retry. */
  minDelay: number;
  /** Cap on one delay, and on a server's `Retry-After`. */
  maxDelay: number;
  /** Give up once this long has passed since the first attempt. */
  maxRetryTime?: number;
}

/** What the `onRetry` hook learns before each wait. */
export interface RetryInfo {
  /** The attempt that failed, from 1. */
  attempt: number;
  error: DeliveryError;
  /** How long the next attempt waits, in ms. */
  delay: number;
}

/**
 * Exponential backoff with "equal jitter": half the step is fixed, half random, so many clients
 * failing together spread out, yet every wait keeps a floor (no near-zero retry storm).
 */
export function backoff(retry: number, policy: Pick<RetryPolicy, 'minDelay' | 'maxDelay'>, random = Math.random): number {
  const step = Math.min(policy.maxDelay, policy.minDelay * 2 ** (retry - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/**
 * The wait before retry number `retry`: the `Retry-After` the error carries (capped), else backoff.
 * Any `DeliveryError` with a numeric `retryAfter` counts, not only an `HttpError`: the webhooks
 * destination reports one error for several URLs and carries the longest wait they asked for.
 */
export function retryDelay(error: DeliveryError, retry: number, policy: RetryPolicy): number {
  const { retryAfter } = error as { retryAfter?: unknown };
  if (typeof retryAfter === 'number') return Math.min(retryAfter, policy.maxDelay);
  return backoff(retry, policy);
}

/**
 * Runs `attempt` until it resolves, retrying only retryable `DeliveryError`s within the policy.
 * p-retry counts attempts and enforces `maxRetryTime` and the abort signal; the wait is ours, so
 * that `Retry-After` replaces the backoff instead of adding to it.
 * @throws the last error, or the signal's reason once aborted.
 */
export async function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  policy: RetryPolicy,
  hooks: { signal?: AbortSignal; onRetry?: (info: RetryInfo) => void } = {},
): Promise<T> {
  const started = performance.now();
  // Nearly every batch succeeds at once, and a p-retry call is costly for the hot path (it copies
  // and validates its options). So the first attempt runs here, checked as p-retry checks it,
  // and only a failure enters p-retry, which replays it as its own first attempt.
  let firstError: unknown;
  try {
    hooks.signal?.throwIfAborted();
    const result = await attempt(1);
    hooks.signal?.throwIfAborted();
    return result;
  } catch (error) {
    firstError = error;
  }
  const maxRetryTime = policy.maxRetryTime ?? Number.POSITIVE_INFINITY;
  return pRetry((attemptNumber) => (attemptNumber === 1 ? Promise.reject(firstError) : attempt(attemptNumber)), {
    retries: policy.retries,
    maxRetryTime: Math.max(0, maxRetryTime - (performance.now() - started)),
    minTimeout: 0,
    signal: hooks.signal,
    async shouldRetry({ error, attemptNumber }) {
      if (!(error instanceof DeliveryError) || !error.retryable) return false;
      const remaining = (policy.maxRetryTime ?? Number.POSITIVE_INFINITY) - (performance.now() - started);
      const delay = Math.max(0, Math.min(retryDelay(error, attemptNumber, policy), remaining));
      hooks.onRetry?.({ attempt: attemptNumber, error, delay });
      await sleep(delay, hooks.signal);
      return true;
    },
  });
}

/**
 * Resolves after `ms`, or rejects with the signal's reason once it aborts. A wait computed at run
 * time (a service's `Retry-After` that `maxRateLimitDuration` allows) may be longer than a timer
 * holds: it is waited in steps of at most `MAX_DELAY`, since one timer would fire it after 1 ms.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const wait = (left: number) => {
      timer = setTimeout(() => {
        if (left > MAX_DELAY) {
          wait(left - MAX_DELAY);
          return;
        }
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.min(left, MAX_DELAY));
    };
    wait(ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
