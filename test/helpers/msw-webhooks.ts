import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import type { FetchLike } from '../../src/options.js';

/** Sends through the global fetch, looked up at call time, so msw sees it. */
export const viaGlobalFetch: FetchLike = (input, init) => globalThis.fetch(input, init);

const server = setupServer();

/** Starts msw for the calling test file; any request nobody mocked fails the test. */
export function useMsw(): void {
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => {
    server.resetHandlers();
    vi.useRealTimers();
  });
  afterAll(() => server.close());
}

/** A request a mocked webhook got, and when (`Date.now()`, fake under fake timers). */
export interface MockedRequest {
  at: number;
  headers: Headers;
  raw: string;
}

/**
 * Mocks a webhook URL: answers the n-th request (from 0) with `reply(n)`.
 * @returns the requests, filled as they arrive.
 */
export function mockWebhook(url: string, reply: (n: number) => Response | Promise<Response>): MockedRequest[] {
  const requests: MockedRequest[] = [];
  server.use(
    http.post(url, async ({ request }) => {
      requests.push({ at: Date.now(), headers: request.headers, raw: await request.text() });
      return reply(requests.length - 1);
    }),
  );
  return requests;
}
