// Type-level contract: `npm test` runs `tsc --noEmit` over this file, so an `@ts-expect-error` that
// stops erroring (a looser type) or an `expectTypeOf` that no longer holds fails the build.
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  Analytics,
  type AnalyticsError,
  type DropEvent,
  type FailedEvent,
  type FlushEvent,
  type RequestEvent,
  type ResponseEvent,
  type RetryEvent,
  ValidationError,
} from '../../src/index.js';
import { WebhookDestination, type WebhookDeliveryResult } from '../../src/webhooks/index.js';

const analytics = new Analytics('write-key', { disable: true });

describe('on()', () => {
  it('accepts only the events that exist, each with its payload type', () => {
    // @ts-expect-error a misspelt event name never fires, so it does not type-check (nor run)
    expect(() => analytics.on('flsh', () => {})).toThrow(expect.objectContaining({ name: 'ConfigError' }));
    analytics.on('flush', (payload) => expectTypeOf(payload).toEqualTypeOf<FlushEvent>());
    analytics.on('retry', (payload) => expectTypeOf(payload).toEqualTypeOf<RetryEvent>());
    analytics.on('drop', (payload) => expectTypeOf(payload).toEqualTypeOf<DropEvent>());
    analytics.on('error', (payload) => expectTypeOf(payload).toEqualTypeOf<AnalyticsError>());
    analytics.on('failed', (payload) => expectTypeOf(payload).toEqualTypeOf<FailedEvent>());
    analytics.on('request', (payload) => expectTypeOf(payload).toEqualTypeOf<RequestEvent>());
    analytics.on('response', (payload) => expectTypeOf(payload).toEqualTypeOf<ResponseEvent>());
    // @ts-expect-error a listener for another event's payload
    analytics.on('failed', (payload: RequestEvent) => payload);
    expectTypeOf(analytics.on<'flush'>).parameter(0).toEqualTypeOf<'flush'>();
  });
});

describe('calls', () => {
  it('need a userId or an anonymousId: neither is a compile error, as well as a run-time one', () => {
    // @ts-expect-error neither userId nor anonymousId
    expect(() => analytics.identify({ traits: { plan: 'pro' } })).toThrow(ValidationError);
    // @ts-expect-error neither userId nor anonymousId
    expect(() => analytics.track({ event: 'Order Completed' })).toThrow(ValidationError);
    // @ts-expect-error neither userId nor anonymousId
    expect(() => analytics.group({ groupId: 'acme' })).toThrow(ValidationError);
    analytics.identify({ userId: 'u', traits: { plan: 'pro' } });
    analytics.track({ anonymousId: 'a', event: 'Order Completed' });
    analytics.page({ userId: 'u', anonymousId: 'a' });
  });

  it('alias needs userId and previousId, and an anonymousId does not stand in for the userId', () => {
    // @ts-expect-error previousId missing
    expect(() => analytics.alias({ userId: 'u' })).toThrow(ValidationError);
    // @ts-expect-error userId missing
    expect(() => analytics.alias({ anonymousId: 'a', previousId: 'p' })).toThrow(ValidationError);
    analytics.alias({ userId: 'u', previousId: 'p' });
  });

  it('track needs an event and group a groupId', () => {
    // @ts-expect-error event missing
    expect(() => analytics.track({ userId: 'u' })).toThrow(ValidationError);
    // @ts-expect-error groupId missing
    expect(() => analytics.group({ userId: 'u' })).toThrow(ValidationError);
  });
});

describe('WebhookDestination.deliver()', () => {
  it('accepts a call with its type, as the README shows, a full message and a delete notification', () => {
    type Deliver = WebhookDestination['deliver'];
    expectTypeOf<Deliver>().toBeCallableWith({ type: 'track', userId: 'u', event: 'Order Completed', properties: { total: 30 } });
    expectTypeOf<Deliver>().toBeCallableWith({ type: 'identify', userId: 'u', traits: { plan: 'pro' } });
    expectTypeOf<Deliver>().toBeCallableWith({ type: 'alias', userId: 'u', previousId: 'anon' });
    expectTypeOf<Deliver>().toBeCallableWith({ type: 'delete', userId: 'u' });
    expectTypeOf<Deliver>().returns.resolves.toEqualTypeOf<WebhookDeliveryResult>();
    // @ts-expect-error a track without its event
    expectTypeOf<Deliver>().toBeCallableWith({ type: 'track', userId: 'u' });
    expect(WebhookDestination).toBeTypeOf('function');
  });

  it("on() accepts only the destination's event names", () => {
    type On = WebhookDestination['on'];
    expectTypeOf<On>().toBeCallableWith('delivered', () => {});
    // @ts-expect-error no such event
    expectTypeOf<On>().toBeCallableWith('deliverd', () => {});
  });
});

afterAll(() => analytics.close());
