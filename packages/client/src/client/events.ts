import type { AnalyticsError, BeforeSendError, ClosedError, DeliveryError, FilteredError, HttpError, QueueFullError, SpoolFullError } from '../core/errors.js';
import type { Message } from '../core/message.js';

/** Called once per message: without an error once delivered, with one once it failed or was dropped. */
export type Callback = (error?: AnalyticsError) => void;

/** What happened to messages: resolved by `flush()` and `close()`. */
export interface Summary {
  /** Messages the endpoint accepted (2xx). */
  delivered: number;
  /** Messages given up on: permanent errors, retries exhausted, or the `close()` deadline. */
  failed: number;
  /** Calls refused: queue full, made after `close()`, or dropped by a `beforeSend` hook. */
  dropped: number;
}

/** Payload of the `flush` event: one batch settled, delivered or not. */
export interface FlushEvent {
  count: number;
  bytes: number;
  attempts: number;
  /** The final error when the batch failed. */
  error?: DeliveryError;
}

/** Payload of the `retry` event: a batch failed transiently and will be sent again. */
export interface RetryEvent {
  count: number;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Wait before the next attempt, in ms. */
  delay: number;
  error: DeliveryError;
}

/**
 * Payload of the `rate-limit` event: the service answered 429 or 503 with `Retry-After`, and the
 * whole client waits until `until` before sending again, without spending a retry.
 */
export interface RateLimitEvent {
  /** Messages in the batch that was refused; it is sent again after the pause. */
  count: number;
  /** 429 or 503. */
  status: number;
  /** The pause from now, in ms. */
  delay: number;
  /** When sending resumes. */
  until: Date;
  error: HttpError;
}

/** Payload of the `drop` event: a call was refused and will never be sent. */
export type DropEvent =
  | {
      reason: 'queue-full' | 'closed';
      error: QueueFullError | SpoolFullError | ClosedError;
      /** The message as it would have been sent. */
      message: Message;
    }
  | {
      /** A `beforeSend` hook returned `null` (`'filtered'`), or threw or returned an invalid message. */
      reason: 'filtered' | 'before-send';
      error: FilteredError | BeforeSendError;
      /** The message as the hooks received it. */
      message: Message;
    };

/** Payload of the `failed` event: a batch was given up on. */
export interface FailedEvent {
  /** The messages exactly as they were sent (or, at the `close()` deadline, would have been). */
  messages: Message[];
  error: DeliveryError;
}

/** Payload of the `request` event: an HTTP attempt is about to be made. */
export interface RequestEvent {
  /** From 1; retries count up. */
  attempt: number;
  /** Messages in the batch. */
  count: number;
  /** Bytes of the request body as sent (compressed, with `gzip`). */
  bytes: number;
  url: string;
}

/** Payload of the `response` event: an HTTP attempt ended. */
export interface ResponseEvent {
  attempt: number;
  count: number;
  /** The HTTP status; absent when no response came (network error, timeout, abort). */
  status?: number;
  /** From the request's start to its outcome, in ms. */
  durationMs: number;
  /** Why the attempt failed; absent on a 2xx. */
  error?: DeliveryError;
}

/** Events of {@link Analytics}: `on()` accepts these names only. */
export interface AnalyticsEvents {
  error: AnalyticsError;
  flush: FlushEvent;
  retry: RetryEvent;
  'rate-limit': RateLimitEvent;
  drop: DropEvent;
  failed: FailedEvent;
  request: RequestEvent;
  response: ResponseEvent;
}

/** The names of {@link AnalyticsEvents}, for `on()` to check at run time (a record: none is left out). */
export const ANALYTICS_EVENT_NAMES = Object.keys({
  error: true,
  flush: true,
  retry: true,
  'rate-limit': true,
  drop: true,
  failed: true,
  request: true,
  response: true,
} satisfies Record<keyof AnalyticsEvents, true>);
