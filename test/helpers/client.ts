import { Analytics, type AnalyticsEvents, type Options } from '../../packages/client/src/index.js';
import { ENDPOINT, viaGlobalFetch } from './endpoint.js';

/** A client that sends to the msw-mocked endpoint. */
export function client(options: Options = {}): Analytics {
  return new Analytics('write-key', { endpoint: ENDPOINT, fetch: viaGlobalFetch, ...options });
}

/** The arguments of a track call, numbered. */
export const track = (n: number) => ({ userId: `user-${n}`, event: 'Order Completed', properties: { n } });

/** Collects every payload of one event type, in order. */
export function recordEvents<K extends keyof AnalyticsEvents>(analytics: Analytics, type: K): AnalyticsEvents[K][] {
  const events: AnalyticsEvents[K][] = [];
  analytics.on(type, (payload) => events.push(payload));
  return events;
}
