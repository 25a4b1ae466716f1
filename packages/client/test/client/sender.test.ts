import { HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import {
  CloseTimeoutError,
  HttpError,
  NetworkError,
} from '../../src/index.js';
import { client, recordEvents, track } from '../../../../test/helpers/client.js';
import { ENDPOINT, mockEndpoint, silentEndpoint } from '../../../../test/helpers/endpoint.js';
import { useMockServer } from '../../../../test/helpers/msw-lifecycle.js';

useMockServer();

function recordAttempts(analytics: ReturnType<typeof client>) {
  return { requests: recordEvents(analytics, 'request'), responses: recordEvents(analytics, 'response') };
}

describe('request and response events', () => {
  it('tell of each HTTP attempt before and after it', async () => {
    const received = mockEndpoint();
    const analytics = client({ flushAt: 2 });
    const { requests, responses } = recordAttempts(analytics);
    analytics.track(track(1));
    analytics.track(track(2));
    await analytics.flush();

    expect(requests).toEqual([{ attempt: 1, count: 2, bytes: Buffer.byteLength(received[0]!.raw), url: `${ENDPOINT}/v1/batch` }]);
    expect(responses).toEqual([{ attempt: 1, count: 2, status: 200, durationMs: expect.any(Number) }]);
    expect(responses[0]!.durationMs).toBeGreaterThanOrEqual(0);
    await analytics.close();
  });

  it('number retries and carry the status and error of each failed attempt', async () => {
    vi.useFakeTimers();
    mockEndpoint((_, index) => (index === 0 ? new HttpResponse('busy', { status: 503 }) : HttpResponse.json({ success: true })));
    const analytics = client({ minRetryDelay: 100 });
    const { requests, responses } = recordAttempts(analytics);
    analytics.track(track(1));
    const flushed = analytics.flush();
    await vi.advanceTimersByTimeAsync(100);
    await flushed;

    expect(requests.map((r) => r.attempt)).toEqual([1, 2]);
    expect(responses.map((r) => [r.attempt, r.status])).toEqual([
      [1, 503],
      [2, 200],
    ]);
    expect(responses[0]!.error).toBeInstanceOf(HttpError);
    expect(responses[1]!.error).toBeUndefined();
    await analytics.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('report an attempt without a response with no status', async () => {
    mockEndpoint(() => HttpResponse.error());
    const analytics = client({ maxRetries: 0 });
    const { responses } = recordAttempts(analytics);
    analytics.track(track(1));
    await analytics.flush();

    expect(responses).toHaveLength(1);
    expect(responses[0]!.status).toBeUndefined();
    expect(responses[0]!.error).toBeInstanceOf(NetworkError);
    await analytics.close();
  });
});

describe('failed event', () => {
  it('carries the messages of a batch given up, exactly as they were sent, and the error', async () => {
    const received = mockEndpoint(() => HttpResponse.json({ message: 'bad write key' }, { status: 401 }));
    const analytics = client();
    const failed = recordEvents(analytics, 'failed');
    analytics.track(track(1));
    analytics.identify({ userId: 'user-2', traits: { name: 'Zoë' } });
    await analytics.flush();

    expect(failed).toHaveLength(1);
    expect(failed[0]!.messages).toEqual(received[0]!.body.batch);
    expect(failed[0]!.error).toBeInstanceOf(HttpError);
    expect(failed[0]!.error).toMatchObject({ status: 401 });
    await analytics.close();
  });

  it('reads them from the body last sent: after a retry, and with gzip', async () => {
    const received = mockEndpoint((_, index) => new HttpResponse(null, { status: index === 0 ? 503 : 400 }));
    const analytics = client({ gzip: true, minRetryDelay: 1 });
    const failed = recordEvents(analytics, 'failed');
    analytics.track(track(1));
    analytics.page({ userId: 'user-2', properties: { title: 'Ünïcode ✓' } });
    await analytics.flush();

    expect(received).toHaveLength(2);
    expect(failed.map((event) => event.messages)).toEqual([received[1]!.body.batch]);
    expect(failed[0]!.error).toMatchObject({ status: 400 });
    await analytics.close();
  });

  it('carries the messages in flight and still queued at the close() deadline', async () => {
    vi.useFakeTimers();
    silentEndpoint();
    const analytics = client({ flushAt: 2, maxInFlight: 1 });
    const failed = recordEvents(analytics, 'failed');
    for (let n = 0; n < 5; n++) analytics.track({ ...track(n), messageId: `m-${n}` });
    const closing = analytics.close({ timeout: 1_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    await closing;

    const ids = failed.flatMap((event) => event.messages.map((message) => message.messageId)).sort();
    expect(ids).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4']);
    for (const event of failed) expect(event.error).toBeInstanceOf(CloseTimeoutError);
    expect(failed.flatMap((event) => event.messages).find((m) => m.messageId === 'm-4')).toMatchObject({
      type: 'track',
      userId: 'user-4',
      properties: { n: 4 },
      context: { library: { name: 'batched-analytics' } },
    });
    expect(vi.getTimerCount()).toBe(0);
  });
});
