import { http } from 'msw';
import { server } from './endpoint.js';

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
