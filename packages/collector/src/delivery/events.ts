import { Emitter, type WebhookDestination, type WebhookInput } from 'batched-analytics/internal';
import type { WebhookAttemptEvent } from 'batched-analytics/webhooks';
import type { Delivery, Outcome } from './store.js';
import type { UrlState } from './url-states.js';
import type { Alert } from './alert.js';

/**
 * How a message arrived: a tracking call, an audience sync, a deletion request, the store
 * (`replay`: a delivery accepted before a restart, or by another collector), or a redelivery asked
 * for from the page or `POST /v1/deliveries/:id/replay`.
 */
export type Origin = 'api' | 'audience' | 'deletion' | 'replay' | 'redelivery';

/** Whether a message goes to a destination, and why not when it does not. */
export interface Route {
  destination: string;
  forwarded: boolean;
  reason?: string;
  /** Set when no webhook URL's `filter` takes the message: what the metrics count, not the reason's words. */
  filtered?: true;
}

/** A route's `reason` when each webhook URL of the source has a `filter` and none takes the message. */
export const NO_FILTER_TAKES = 'no webhook URL\'s filter takes it';

/** Whether an entry is forwarded nowhere because no webhook URL's `filter` takes it. */
export function isFilteredOut(entry: Entry): boolean {
  return entry.routes.some((route) => route.filtered === true);
}

/** A message the ingress validated and routed, as the intake records it. */
export interface Entry {
  /** The delivery's id when it is forwarded; an id of its own otherwise. */
  id: string;
  source: string;
  message: WebhookInput;
  origin: Origin;
  routes: Route[];
  /** When it was accepted, in ms since the epoch. */
  receivedAt: number;
  /** Present when it is forwarded. */
  delivery?: Delivery;
  /** For a redelivery: the delivery it sends again. */
  replayOf?: string;
}

/** One receiver's answer within one attempt, as the source's destination told it, with the source. */
export type AttemptEvent = Omit<WebhookAttemptEvent, 'messageId' | 'type'> & { source: string };

/**
 * What the delivery layer tells whoever watches it (the page, the metrics, the logs): they
 * subscribe, and nothing in the layer knows them. Arrays are per acceptance (a batch is one), so
 * that a busy route costs a call per batch, not per message.
 */
export interface DeliveryEvents {
  /** Recorded durably, in order: forwarded or not. */
  accepted: readonly Entry[];
  /** Repeats of messages their source accepted within the de-duplication window: not recorded. */
  duplicate: readonly { entry: Entry; firstAcceptedAt: number }[];
  /**
   * An attempt starts on a claimed delivery: accepted here (`acceptedHere`, told as `accepted`
   * then), or by another process sharing the store, or before a restart.
   */
  claimed: { delivery: Delivery; attempt: number; acceptedHere: boolean };
  attempt: AttemptEvent;
  /** No receiver accepted the attempt; the next one is due in `delay` ms. */
  retry: { delivery: Delivery; attempt: number; delay: number; failures: readonly { index: number; retryable: boolean; message: string }[] };
  /** Settled in the store: delivered, or given up (`error` says why). */
  settled: { delivery: Delivery; attempt: number; outcome: Outcome; error?: Error };
  /** Settled as failed without an attempt: its source has no Webhooks destination any more. */
  dropped: { delivery: Delivery; reason: string };
  /** A source's destination was made: its receivers' requests can be watched from now on. */
  destination: { source: string; destination: WebhookDestination };
  /**
   * Every URL the delivery could still go to is disabled: it is kept, not attempted, until one is
   * enabled again (`targets`, positions in the source's `webhooks`).
   */
  kept: { delivery: Delivery; attempt: number; targets: readonly number[] };
  /** A URL failed `failingAfter` attempts in a row (told at most once an hour per URL, by one process). */
  urlFailing: { state: UrlState; failures: number; messageId: string };
  /** A URL whose attempts all failed for `disableAfter` is disabled (told by the process that disabled it). */
  urlDisabled: { state: UrlState; messageId: string };
  /** A disabled URL was enabled again (told by the process that enabled it). */
  urlEnabled: { state: UrlState; disabledAt: number };
  /** An alert was raised (and, with `alerts` in the config, recorded for delivery to its URL). */
  alert: Alert;
}

/** The delivery layer's events (see {@link DeliveryEvents}); listeners that throw are logged and ignored. */
export class DeliveryEmitter extends Emitter<DeliveryEvents> {}
