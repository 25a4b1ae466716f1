import type { AnalyticsError, ClosedError, DeliveryError, QueueFullError } from './errors.js';
import type { Message } from './message.js';

/** Called once per message: without an error once delivered, with one once it failed or was dropped. */
export type Callback = (error?: AnalyticsError) => void;

/** What happened to messages: resolved by `flush()` and `close()`. */
export interface Summary {
  /** Messages the endpoint accepted (2xx). */
  delivered: number;
  /** Messages given up on: permanent errors, retries exhausted, or the `close()` deadline. */
  failed: number;
  /** Calls refused: queue full, or made after `close()`. */
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

/** Payload of the `drop` event: a call was refused and will never be sent. */
export interface DropEvent {
  reason: 'queue-full' | 'closed';
  error: QueueFullError | ClosedError;
  message: Message;
}

/** Events of {@link Analytics}. */
export interface AnalyticsEvents {
  error: AnalyticsError;
  flush: FlushEvent;
  retry: RetryEvent;
  drop: DropEvent;
}
