import { displayUrl, HttpError, WebhookError } from 'batched-analytics/internal';
import type { Reporter } from '../config/report.js';
import type { DeliveryEmitter } from '../delivery/events.js';

/**
 * Writes what an operator must see of deliveries: each one given up or dropped, at warn. The
 * first receiver's URL (as shown) and status, not the error's text: a receiver's answer, quoted in
 * it, may say anything; the live page shows it.
 */
export function logDeliveries(events: DeliveryEmitter, report: Reporter): void {
  events.on('settled', ({ delivery, attempt, outcome, error }) => {
    if (outcome === 'delivered') return;
    const failure = error instanceof WebhookError ? error.failures[0] : undefined;
    const fields = {
      source: delivery.source,
      deliveryId: delivery.id,
      messageId: delivery.webhook.messageId,
      url: failure && displayUrl(failure.url),
      status: failure?.error instanceof HttpError ? failure.error.status : undefined,
    };
    report.warn(fields, 'collector: %s given up after %d attempt(s); the live page shows why', delivery.id, attempt);
  });
  events.on('dropped', ({ delivery, reason }) => {
    const fields = { source: delivery.source, deliveryId: delivery.id, messageId: delivery.webhook.messageId };
    report.warn(fields, 'collector: %s dropped: %s', delivery.id, reason);
  });
}
