import { randomUUID } from 'node:crypto';
import { displayUrl, HttpError, messageOf, WebhookError, type WebhookInput, type WebhookType } from 'batched-analytics/internal';
import { ALERTS_SOURCE } from '../config/config.js';
import type { Reporter } from '../config/report.js';
import type { Deliverer } from './deliverer.js';
import type { DeliveryEmitter } from './events.js';
import type { Delivery, Store } from './store.js';
import { type UrlState, withoutUndefined } from './url-states.js';
import type { Alert, AlertData, AlertType } from './alert.js';

/** Alerts the page keeps, newest last. */
const ALERT_LOG = 100;

/**
 * Raises alerts from the delivery layer's events: a URL failing, disabled or enabled again, a
 * delivery given up. Each is told as an `alert` event (the metrics count them, the page lists
 * them) and, with an alert receiver configured, recorded in the store as a delivery of the
 * collector's own source ({@link ALERTS_SOURCE}) to it: durable, retried, signed as any other
 * webhook, and attempted by whichever process claims it. Deliveries of that source never raise alerts.
 */
export class Alerts {
  readonly #store: Store;
  readonly #deliverer: Deliverer;
  readonly #events: DeliveryEmitter;
  readonly #lease: number;
  readonly #report: Reporter;
  /** Whether alerts go to a receiver: a reload may add or remove it. */
  #sending: boolean;
  readonly #log: Alert[] = [];

  constructor(options: { store: Store; deliverer: Deliverer; events: DeliveryEmitter; lease: number; sending: boolean; report: Reporter }) {
    this.#report = options.report;
    this.#store = options.store;
    this.#deliverer = options.deliverer;
    this.#events = options.events;
    this.#lease = options.lease;
    this.#sending = options.sending;
  }

  /** Whether there is an alert receiver (a config reload). */
  reconfigure(sending: boolean): void {
    this.#sending = sending;
  }

  /** The latest alerts raised here, oldest first. */
  latest(): readonly Alert[] {
    return this.#log;
  }

  /** Raises alerts from what `events` tells from now on. */
  follow(events: DeliveryEmitter): void {
    events.on('urlFailing', ({ state, failures, messageId }) => this.#raise('endpoint.failing', { ...urlData(state), failures, messageId }));
    events.on('urlDisabled', ({ state, messageId }) => this.#raise('endpoint.disabled', { ...urlData(state), disabledAt: iso(state.disabledAt), messageId }));
    events.on('urlEnabled', ({ state, disabledAt }) => this.#raise('endpoint.enabled', { ...urlData(state), disabledAt: iso(disabledAt), enabledAt: iso(state.enabledAt) }));
    events.on('settled', ({ delivery, attempt, outcome, error }) => {
      // Only a delivery its receivers failed: not one no filter takes any more, nor an alert.
      if (outcome !== 'failed' || !(error instanceof WebhookError) || delivery.source === ALERTS_SOURCE) return;
      const failure = error.failures.at(-1);
      this.#raise('message.attempt.exhausted', {
        source: delivery.source,
        url: failure ? displayUrl(failure.url) : '',
        messageId: delivery.webhook.messageId,
        ...lastOf(failure?.error),
        attempts: attempt,
        receivedAt: iso(delivery.webhook.receivedAt),
      });
    });
  }

  #raise(type: AlertType, data: AlertData): void {
    const alert: Alert = { id: `alert_${randomUUID()}`, type, timestamp: new Date().toISOString(), data: withoutUndefined(data) };
    this.#log.push(alert);
    if (this.#log.length > ALERT_LOG) this.#log.shift();
    this.#events.emit('alert', alert);
    if (this.#sending) void this.#send(alert);
  }

  async #send(alert: Alert): Promise<void> {
    const receivedAt = Date.parse(alert.timestamp);
    const body = JSON.stringify({ type: alert.type, timestamp: alert.timestamp, data: alert.data });
    // The store keeps a delivery's message and webhook: an alert is both, its type its own.
    const delivery: Delivery = {
      id: alert.id,
      source: ALERTS_SOURCE,
      message: alert as unknown as WebhookInput,
      webhook: { messageId: alert.id, type: alert.type as unknown as WebhookType, body, receivedAt },
    };
    try {
      const room = Math.min(1, this.#deliverer.room());
      this.#deliverer.take(await this.#store.accept([delivery], { claim: room, lease: this.#lease }), 1 - room);
    } catch (error) {
      this.#report.warn('collector: could not record the %s alert for %s (it is logged and counted only): %s', alert.type, alert.data.source, messageOf(error));
    }
  }
}

function urlData(state: UrlState): AlertData {
  return { source: state.source, url: displayUrl(state.url), lastStatus: state.lastStatus, lastError: state.lastError, failingSince: iso(state.failingSince) };
}

function lastOf(error: Error | undefined): Pick<AlertData, 'lastStatus' | 'lastError'> {
  return error instanceof HttpError ? { lastStatus: error.status } : { lastError: error?.message };
}

function iso(at: number | undefined): string | undefined {
  return at === undefined ? undefined : new Date(at).toISOString();
}
