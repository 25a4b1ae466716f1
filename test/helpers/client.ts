import { Analytics, type Options } from '../../src/index.js';
import { ENDPOINT, viaGlobalFetch } from './endpoint.js';

/** A client that sends to the msw-mocked endpoint. */
export function client(options: Options = {}): Analytics {
  return new Analytics('write-key', { endpoint: ENDPOINT, fetch: viaGlobalFetch, ...options });
}

/** A response that never comes; unlike msw's delay('infinite') it leaves no timer behind. */
export const hang = new Promise<never>(() => {});

/** The arguments of a track call, numbered. */
export const track = (n: number) => ({ userId: `user-${n}`, event: 'Order Completed', properties: { n } });
