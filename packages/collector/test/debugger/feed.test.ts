// The page's feed of the delivery layer: how each webhook URL of a message shows its filter.
import { prepareWebhook, type WebhookInput } from 'batched-analytics/internal';
import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/config/config.js';
import { EventHub } from '../../src/debugger/events.js';
import { PageFeed } from '../../src/debugger/feed.js';
import { DeliveryEmitter, type Entry } from '../../src/delivery/events.js';

const source: SourceConfig = {
  name: 'web',
  writeKey: 'wk',
  webhooks: {
    webhooks: [
      { url: 'http://127.0.0.1:9/orders', filter: { events: ['Order Completed'] } },
      { url: 'http://127.0.0.1:9/people', filter: { types: ['identify', 'track'] } },
    ],
  },
};

function followed(): { hub: EventHub; events: DeliveryEmitter } {
  const hub = new EventHub();
  const events = new DeliveryEmitter();
  new PageFeed({ hub, sources: new Map([['web', source]]) }).follow(events);
  return { hub, events };
}

function entry(id: string, message: WebhookInput): Entry {
  const receivedAt = Date.now();
  return {
    id,
    source: 'web',
    message,
    origin: 'api',
    routes: [{ destination: 'Webhooks', forwarded: true }],
    receivedAt,
    delivery: { id, source: 'web', message, webhook: prepareWebhook(message, receivedAt) },
  };
}

describe('PageFeed', () => {
  it('shows a URL whose filter does not take a message as filtered, with each URL\'s filter', () => {
    const { hub, events } = followed();
    events.emit('accepted', [entry('e1', { type: 'track', event: 'Signed Up', userId: 'u1', messageId: 'm1' } as WebhookInput)]);
    expect(hub.get('e1')!.webhooks).toEqual([
      { url: 'http://127.0.0.1:9/orders', status: 'filtered', attempts: 0, filter: 'events: Order Completed', note: 'not sent: its filter does not take this message' },
      { url: 'http://127.0.0.1:9/people', status: 'pending', attempts: 0, filter: 'types: identify, track' },
    ]);
  });

  it('shows a delivery given up because a reload\'s filters take it no more as failed, with the reason, leaving filtered URLs as they are', () => {
    const { hub, events } = followed();
    const accepted = entry('e2', { type: 'track', event: 'Signed Up', userId: 'u1', messageId: 'm2' } as WebhookInput);
    events.emit('accepted', [accepted]);
    const reason = 'no webhook URL\'s filter takes it since the config was reloaded';
    events.emit('settled', { delivery: accepted.delivery!, attempt: 1, outcome: 'failed', error: new Error(reason) });
    expect(hub.get('e2')!.webhooks.map(({ status, note }) => ({ status, note }))).toEqual([
      { status: 'filtered', note: 'not sent: its filter does not take this message' },
      { status: 'failed', note: reason },
    ]);
  });
});
