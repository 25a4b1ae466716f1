import { gunzipSync } from 'node:zlib';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import type { FetchLike } from '../../packages/client/src/http/connection.js';

/** The collection endpoint every msw-backed test talks to. */
export const ENDPOINT = 'https://collect.test';

/** A request the mocked endpoint received. */
export interface Received {
  headers: Headers;
  raw: string;
  body: { batch: Array<Record<string, any>>; sentAt: string };
}

type Reply = (request: Received, index: number) => Response | Promise<Response>;

/** Sends through the global fetch, looked up at call time, so msw sees it. */
export const viaGlobalFetch: FetchLike = (input, init) => globalThis.fetch(input, init);

export const server = setupServer();

/**
 * Mocks `${ENDPOINT}/v1/batch`, records every request and answers with `reply` (200 by default).
 * @returns the list of received requests, filled as they arrive.
 */
export function mockEndpoint(reply: Reply = () => HttpResponse.json({ success: true })): Received[] {
  const received: Received[] = [];
  server.use(
    http.post(`${ENDPOINT}/v1/batch`, async ({ request }) => {
      const bytes = Buffer.from(await request.arrayBuffer());
      const raw = (request.headers.get('content-encoding') === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8');
      const entry: Received = { headers: request.headers, raw, body: JSON.parse(raw) };
      received.push(entry);
      return reply(entry, received.length - 1);
    }),
  );
  return received;
}

/** All message ids the endpoint received, in order, with repeats. */
export function messageIds(received: Received[]): string[] {
  return received.flatMap((r) => r.body.batch.map((m) => m.messageId as string));
}

/** A response that never comes; unlike msw's delay('infinite') it leaves no timer behind. */
export const hang = new Promise<never>(() => {});

/** An endpoint that receives every request and never answers (only a timeout or abort ends one). */
export function silentEndpoint(): Received[] {
  return mockEndpoint(async () => {
    await hang;
    return HttpResponse.json({ success: true });
  });
}

/** An endpoint that holds every response until `release()` is called. */
export function gatedEndpoint(): { received: Received[]; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const received = mockEndpoint(async () => {
    await gate;
    return HttpResponse.json({ success: true });
  });
  return { received, release };
}
