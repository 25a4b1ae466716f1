import type { WebhookDestination, WebhookEvents } from '../../packages/client/src/webhooks/index.js';

/** Collects every payload of one event type, in order. */
export function record<K extends keyof WebhookEvents>(dest: WebhookDestination, type: K): WebhookEvents[K][] {
  const events: WebhookEvents[K][] = [];
  dest.on(type, (payload) => events.push(payload));
  return events;
}
