// The page's feed of the delivery layer: how each webhook URL of a message shows its filter, and
// what a view keeps of the message (the store keeps the whole of a forwarded one).
import { prepareWebhook, type WebhookInput } from 'batched-analytics/internal';
import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/config/config.js';
import { EventHub } from '../../src/debugger/events.js';
import { describeEvent } from '../../src/debugger/detail.js';
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

function followed(options: { retention?: number } = {}): { hub: EventHub; events: DeliveryEmitter } {
  const hub = new EventHub({ retention: options.retention ?? 10_000 });
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

  it('keeps the outline of a forwarded message, and the detail view the whole of it from the store\'s record', () => {
    const { hub, events } = followed();
    const track = { type: 'track', event: 'Order Completed', userId: 'u1', messageId: 'm3', properties: { total: 12, items: ['a'] }, context: { ip: '203.0.113.9' } } as unknown as WebhookInput;
    const identify = { type: 'identify', userId: 'u2', messageId: 'm4', traits: { email: 'a@example.com', plan: 'pro' } } as unknown as WebhookInput;
    const page = { type: 'page', anonymousId: 'a1', messageId: 'm5', properties: { path: '/pricing', referrer: 'https://example.com/' } } as unknown as WebhookInput;
    const accepted = [entry('e3', track), entry('e4', identify), entry('e5', page)];
    events.emit('accepted', accepted);
    expect(hub.get('e3')!.message).toEqual({ type: 'track', messageId: 'm3', userId: 'u1', event: 'Order Completed' });
    expect(hub.get('e4')!.message).toEqual({ type: 'identify', messageId: 'm4', userId: 'u2', traitNames: ['email', 'plan'] });
    expect(hub.get('e5')!.message).toEqual({ type: 'page', messageId: 'm5', anonymousId: 'a1', properties: { path: '/pricing' } });
    const record = { delivery: accepted[0]!.delivery!, state: 'pending' as const, attempts: [] };
    expect(describeEvent(hub.get('e3')!, record, source.webhooks).event.message).toEqual(track);
    // The store no longer holds it: the outline is what is left.
    expect(describeEvent(hub.get('e3')!, undefined, source.webhooks).event.message).toEqual(hub.get('e3')!.message);
  });

  it('keeps the whole of a message forwarded nowhere: a repeat, or one no destination takes', () => {
    const { hub, events } = followed();
    const message = { type: 'track', event: 'Signed Up', userId: 'u1', messageId: 'm6', properties: { plan: 'pro' } } as unknown as WebhookInput;
    events.emit('duplicate', [{ entry: entry('e6', message), firstAcceptedAt: Date.now() - 1_000 }]);
    events.emit('accepted', [{ ...entry('e7', message), routes: [{ destination: 'Webhooks', forwarded: false, reason: 'the source has no Webhooks destination' }], delivery: undefined }]);
    expect(hub.get('e6')!.message).toEqual(message);
    expect(hub.get('e7')!.message).toEqual(message);
  });

  describe('a delivery claimed that the page no longer keeps', () => {
    const track = (n: number) => ({ type: 'track', event: 'Order Completed', userId: 'u1', messageId: `m${n}` }) as WebhookInput;
    /** 300 messages accepted into a page that keeps 200: the first 100 are no longer kept. */
    const backlog = () => {
      const { hub, events } = followed({ retention: 200 });
      const accepted = Array.from({ length: 300 }, (_, n) => entry(`b${n}`, track(n)));
      for (const one of accepted) events.emit('accepted', [one]);
      return { hub, events, accepted };
    };
    const keptIds = (hub: EventHub) => hub.older(undefined, 1_000).events.map((view) => view.id).reverse();

    it('is not shown again, as a replay, when this process accepted it (and showed it then)', () => {
      const { hub, events, accepted } = backlog();
      const before = keptIds(hub);
      // Each one shown again would push out the next not yet delivered, which would be shown again too.
      for (const one of accepted.slice(0, 100)) events.emit('claimed', { delivery: one.delivery!, attempt: 1, acceptedHere: true });
      expect(keptIds(hub)).toEqual(before);
      expect(hub.get('b0')).toBeUndefined();
    });

    it('is shown, as a replay, when another process sharing the store, or this one before a restart, accepted it', () => {
      const { hub, events, accepted } = backlog();
      events.emit('claimed', { delivery: accepted[0]!.delivery!, attempt: 1, acceptedHere: false });
      expect(hub.get('b0')).toMatchObject({ origin: 'replay', status: 'pending' });
      expect(keptIds(hub).at(-1)).toBe('b0');
    });
  });
});
