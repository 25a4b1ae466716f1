import { delay, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import {
  ClosedError,
  CloseTimeoutError,
  type DropEvent,
  HttpError,
  NetworkError,
  QueueFullError,
  type RetryEvent,
  TimeoutError,
  ValidationError,
} from '../../src/index.js';
import { client, recordEvents, track } from '../../../../test/helpers/client.js';
import { gatedEndpoint, hang, messageIds, mockEndpoint, silentEndpoint } from '../../../../test/helpers/endpoint.js';
import { useMockServer } from '../../../../test/helpers/msw-lifecycle.js';

useMockServer();


describe('batching', () => {
  it('sends a batch as soon as flushAt messages are queued', async () => {
    const received = mockEndpoint();
    const analytics = client({ flushAt: 3 });
    const delivered = new Promise((resolve) => analytics.on('flush', resolve));
    for (let n = 0; n < 3; n++) analytics.track(track(n));

    expect(await delivered).toEqual({ count: 3, bytes: received[0]!.raw.length, attempts: 1 });
    expect(received).toHaveLength(1);
    expect(received[0]!.body.batch.map((m) => m.userId)).toEqual(['user-0', 'user-1', 'user-2']);
    await analytics.close();
  });

  it('sends a partial batch flushAfter ms after the first queued message', async () => {
    vi.useFakeTimers();
    const received = mockEndpoint();
    const analytics = client({ flushAfter: 2_000 });
    analytics.track(track(1));
    await vi.advanceTimersByTimeAsync(1_000);
    analytics.track(track(2));
    await vi.advanceTimersByTimeAsync(999);
    expect(received).toHaveLength(0);

    await vi.advanceTimersByTimeAsync(1);
    await vi.waitFor(() => expect(received).toHaveLength(1));
    expect(received[0]!.body.batch).toHaveLength(2);
    await analytics.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('accepts the Go client names size and flushInterval', async () => {
    vi.useFakeTimers();
    const received = mockEndpoint();
    const analytics = client({ size: 2, flushInterval: 100 });
    analytics.track(track(1));
    await vi.advanceTimersByTimeAsync(100);
    await vi.waitFor(() => expect(received).toHaveLength(1));
    analytics.track(track(2));
    analytics.track(track(3));
    await vi.waitFor(() => expect(received).toHaveLength(2));
    expect(received[1]!.body.batch).toHaveLength(2);
    await analytics.close();
  });

  it('splits batches so that no request body exceeds 500,000 bytes', async () => {
    const received = mockEndpoint();
    const analytics = client({ flushAt: 100 });
    const big = 'x'.repeat(31_000);
    for (let n = 0; n < 40; n++) analytics.track({ ...track(n), properties: { big } });

    expect(await analytics.flush()).toEqual({ delivered: 40, failed: 0, dropped: 0 });
    expect(received.length).toBeGreaterThanOrEqual(3);
    for (const request of received) expect(Buffer.byteLength(request.raw)).toBeLessThanOrEqual(500_000);
    expect(new Set(messageIds(received)).size).toBe(40);
    await analytics.close();
  });

  it('bounds the number of requests in flight by maxInFlight', async () => {
    const { received, release } = gatedEndpoint();
    const analytics = client({ flushAt: 1, maxInFlight: 2 });
    const sent = recordEvents(analytics, 'request');
    for (let n = 0; n < 5; n++) analytics.track(track(n));
    await vi.waitFor(() => expect(received).toHaveLength(2));
    // The client says when it sends each request, at once: a third sent without waiting for a free
    // slot would have been told before the second could reach the endpoint.
    expect(sent).toHaveLength(2);
    expect(received).toHaveLength(2);

    release();
    expect(await analytics.flush()).toEqual({ delivered: 5, failed: 0, dropped: 0 });
    expect(received).toHaveLength(5);
    await analytics.close();
  });

  it('warns of no listener leak with many requests in flight', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const { received, release } = gatedEndpoint();
    const analytics = client({ flushAt: 1, maxInFlight: 32 });
    for (let n = 0; n < 32; n++) analytics.track(track(n));
    await vi.waitFor(() => expect(received).toHaveLength(32));
    release();
    expect(await analytics.close()).toMatchObject({ delivered: 32 });
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
  });
});

describe('the wire message', () => {
  it('carries type, a UUID messageId, an ISO timestamp, context.library and the call fields', async () => {
    const received = mockEndpoint();
    const analytics = client();
    analytics.identify({ userId: 'u1', traits: { plan: 'pro' } });
    analytics.group({ anonymousId: 'a1', groupId: 'g1', traits: { size: 3 } });
    analytics.alias({ userId: 'u1', previousId: 'a1' });
    analytics.page({ userId: 'u1', name: 'Home', category: 'Docs', properties: { path: '/' } });
    analytics.screen({ userId: 'u1', name: 'Settings' });
    await analytics.flush();

    const [identify, group, alias, page, screen] = received[0]!.body.batch;
    expect(identify).toMatchObject({ type: 'identify', userId: 'u1', traits: { plan: 'pro' } });
    expect(group).toMatchObject({ type: 'group', anonymousId: 'a1', groupId: 'g1', traits: { size: 3 } });
    expect(alias).toMatchObject({ type: 'alias', userId: 'u1', previousId: 'a1' });
    expect(page).toMatchObject({ type: 'page', name: 'Home', category: 'Docs', properties: { path: '/' } });
    expect(screen).toMatchObject({ type: 'screen', name: 'Settings' });
    for (const message of received[0]!.body.batch) {
      expect(message.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(message.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(message.context.library).toEqual({ name: 'batched-analytics', version: expect.any(String) });
    }
    expect(Date.parse(received[0]!.body.sentAt)).not.toBeNaN();
    await analytics.close();
  });

  it('normalises a Date or any parseable string timestamp to UTC with milliseconds, and keeps a given messageId', async () => {
    const received = mockEndpoint();
    const analytics = client();
    analytics.track({ ...track(1), timestamp: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)), messageId: 'm-1' });
    analytics.track({ ...track(2), timestamp: '2024-01-02T05:04:05+02:00' });
    await analytics.flush();

    const [first, second] = received[0]!.body.batch;
    expect(first).toMatchObject({ timestamp: '2024-01-02T03:04:05.006Z', messageId: 'm-1' });
    expect(second!.timestamp).toBe('2024-01-02T03:04:05.000Z');
    await analytics.close();
  });

  it('merges the default integrations and context under each call', async () => {
    const received = mockEndpoint();
    const analytics = client({ integrations: { All: false, Webhooks: true }, context: { app: 'shop', ip: '1.1.1.1' } });
    analytics.track({ ...track(1), integrations: { Mixpanel: true }, context: { ip: '2.2.2.2' } });
    await analytics.flush();

    const [message] = received[0]!.body.batch;
    expect(message!.integrations).toEqual({ All: false, Webhooks: true, Mixpanel: true });
    expect(message!.context).toMatchObject({ app: 'shop', ip: '2.2.2.2' });
    await analytics.close();
  });

  it('authenticates with the write key as basic-auth user and names itself', async () => {
    const received = mockEndpoint();
    const analytics = client();
    analytics.track(track(1));
    await analytics.flush();

    const { headers } = received[0]!;
    expect(headers.get('authorization')).toBe(`Basic ${Buffer.from('write-key:').toString('base64')}`);
    expect(headers.get('content-type')).toBe('application/json');
    expect(headers.get('user-agent')).toMatch(/^batched-analytics\/\d+\.\d+\.\d+/);
    await analytics.close();
  });

  it('gzips the body when asked', async () => {
    const received = mockEndpoint();
    const analytics = client({ gzip: true });
    analytics.track(track(1));
    await analytics.flush();

    expect(received[0]!.headers.get('content-encoding')).toBe('gzip');
    expect(received[0]!.body.batch[0]).toMatchObject({ event: 'Order Completed', userId: 'user-1' });
    await analytics.close();
  });
});

describe('delivery failures', () => {
  it('retries 5xx with backoff, resending the same messageIds, then reports delivery', async () => {
    vi.useFakeTimers();
    const received = mockEndpoint((_, index) =>
      index < 2 ? new HttpResponse('busy', { status: 503 }) : HttpResponse.json({ success: true }),
    );
    const analytics = client({ minRetryDelay: 100 });
    const retries: RetryEvent[] = [];
    analytics.on('retry', (event) => retries.push(event));
    const callback = vi.fn();
    analytics.track(track(1), callback);
    analytics.track(track(2), callback);
    const flushed = analytics.flush();

    await vi.advanceTimersByTimeAsync(0);
    expect(received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(49);
    expect(received).toHaveLength(1); // equal jitter: the first wait is at least minRetryDelay / 2
    await vi.advanceTimersByTimeAsync(500);
    expect(await flushed).toEqual({ delivered: 2, failed: 0, dropped: 0 });

    expect(received).toHaveLength(3);
    expect(messageIds([received[1]!])).toEqual(messageIds([received[0]!]));
    expect(messageIds([received[2]!])).toEqual(messageIds([received[0]!]));
    expect(retries.map((r) => [r.attempt, r.count, (r.error as HttpError).status])).toEqual([
      [1, 2, 503],
      [2, 2, 503],
    ]);
    expect(callback.mock.calls).toEqual([[undefined], [undefined]]);
    await analytics.close();
  });

  it('waits as long as a 429 Retry-After asks before retrying', async () => {
    vi.useFakeTimers();
    const received = mockEndpoint((_, index) =>
      index === 0
        ? new HttpResponse(null, { status: 429, headers: { 'retry-after': '2' } })
        : HttpResponse.json({ success: true }),
    );
    const analytics = client();
    analytics.track(track(1));
    const flushed = analytics.flush();
    await vi.advanceTimersByTimeAsync(1_999);
    expect(received).toHaveLength(1);

    await vi.advanceTimersByTimeAsync(1);
    expect(await flushed).toMatchObject({ delivered: 1 });
    expect(received).toHaveLength(2);
    await analytics.close();
  });

  it('reports other 4xx at once, with status and the response message, without retrying', async () => {
    const received = mockEndpoint(() => HttpResponse.json({ message: 'invalid write key' }, { status: 401 }));
    const analytics = client();
    const errors: unknown[] = [];
    analytics.on('error', (error) => errors.push(error));
    const callback = vi.fn();
    analytics.track(track(1), callback);

    expect(await analytics.flush()).toEqual({ delivered: 0, failed: 1, dropped: 0 });
    expect(received).toHaveLength(1);
    const error = callback.mock.calls[0]?.[0];
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ name: 'HttpError', code: 'ERR_HTTP', status: 401, body: 'invalid write key' });
    expect(errors).toEqual([error]);
    await analytics.close();
  });

  it('gives up after maxRetries on network errors and reports a NetworkError', async () => {
    vi.useFakeTimers();
    const received = mockEndpoint(() => HttpResponse.error());
    const analytics = client({ maxRetries: 2, minRetryDelay: 10 });
    const callback = vi.fn();
    analytics.track(track(1), callback);
    const flushed = analytics.flush();
    await vi.advanceTimersByTimeAsync(1_000);

    expect(await flushed).toEqual({ delivered: 0, failed: 1, dropped: 0 });
    expect(received).toHaveLength(3);
    expect(callback.mock.calls[0]![0]).toBeInstanceOf(NetworkError);
    await analytics.close();
  });

  it('times a request out after `timeout` ms and retries it', async () => {
    vi.useFakeTimers();
    const received = mockEndpoint(async (_, index) => {
      if (index === 0) await hang;
      return HttpResponse.json({ success: true });
    });
    const analytics = client({ timeout: 1_000 });
    const retries: RetryEvent[] = [];
    analytics.on('retry', (event) => retries.push(event));
    analytics.track(track(1));
    const flushed = analytics.flush();
    await vi.advanceTimersByTimeAsync(999);
    expect(retries).toHaveLength(0);

    await vi.advanceTimersByTimeAsync(1);
    expect(retries[0]!.error).toBeInstanceOf(TimeoutError);
    await vi.advanceTimersByTimeAsync(200);
    expect(await flushed).toMatchObject({ delivered: 1 });
    expect(received).toHaveLength(2);
    await analytics.close();
  });

  it('never throws or rejects when a failure has no error listener', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    mockEndpoint(() => new HttpResponse(null, { status: 400 }));
    const analytics = client();
    analytics.track(track(1));
    expect(await analytics.flush()).toMatchObject({ failed: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', unhandled);
    expect(unhandled).not.toHaveBeenCalled();
    await analytics.close();
  });

  it('reports a callback that throws as an error event and keeps delivering', async () => {
    const received = mockEndpoint();
    const analytics = client({ flushAt: 1 });
    const errors: Error[] = [];
    analytics.on('error', (error) => errors.push(error));
    analytics.track(track(1), () => {
      throw new Error('boom');
    });
    analytics.track(track(2));
    expect(await analytics.flush()).toMatchObject({ delivered: 2 });
    expect(received).toHaveLength(2);
    expect(errors).toMatchObject([{ code: 'ERR_CALLBACK', cause: { message: 'boom' } }]);
    await analytics.close();
  });
});

describe('bounds', () => {
  it('drops calls beyond maxQueueSize and reports each one', async () => {
    const { received, release } = gatedEndpoint();
    const analytics = client({ flushAt: 2, maxQueueSize: 3 });
    const drops: DropEvent[] = [];
    analytics.on('drop', (event) => drops.push(event));
    const callback = vi.fn();
    for (let n = 0; n < 5; n++) analytics.track(track(n), callback);
    release();

    expect(await analytics.flush()).toEqual({ delivered: 3, failed: 0, dropped: 2 });
    expect(new Set(messageIds(received)).size).toBe(3);
    expect(drops.map((d) => [d.reason, d.message.userId])).toEqual([
      ['queue-full', 'user-3'],
      ['queue-full', 'user-4'],
    ]);
    expect(drops[0]!.error).toBeInstanceOf(QueueFullError);
    expect(callback.mock.calls.filter(([error]) => error instanceof QueueFullError)).toHaveLength(2);
    await analytics.close();
  });

  it('lets a producer wait with ready() instead of losing calls', async () => {
    const received = mockEndpoint(async () => {
      await delay(5);
      return HttpResponse.json({ success: true });
    });
    const analytics = client({ flushAt: 2, maxQueueSize: 4, maxInFlight: 1 });
    const dropped = vi.fn();
    analytics.on('drop', dropped);
    for (let n = 0; n < 30; n++) {
      await analytics.ready();
      analytics.track(track(n));
    }
    expect(await analytics.close()).toEqual({ delivered: 30, failed: 0, dropped: 0 });
    expect(dropped).not.toHaveBeenCalled();
    expect(new Set(messageIds(received)).size).toBe(30);
  });
});

describe('flush()', () => {
  it('resolves overlapping calls only after delivery, sharing the requests in flight', async () => {
    const received = mockEndpoint(async () => {
      await delay(10);
      return HttpResponse.json({ success: true });
    });
    const analytics = client();
    analytics.track(track(1));
    const first = analytics.flush();
    const second = analytics.flush();


    expect(await first).toEqual({ delivered: 1, failed: 0, dropped: 0 });
    // Each call is reported once, by the first flush() after it; the second waited for the same request.
    expect(await second).toEqual({ delivered: 0, failed: 0, dropped: 0 });
    expect(received).toHaveLength(1);

    analytics.track(track(2));
    expect(await analytics.flush()).toEqual({ delivered: 1, failed: 0, dropped: 0 });
    expect(received).toHaveLength(2);
    await analytics.close();
  });

  it('resolves at once with nothing to do', async () => {
    const analytics = client();
    expect(await analytics.flush()).toEqual({ delivered: 0, failed: 0, dropped: 0 });
    await analytics.close();
  });
});

describe('close()', () => {
  it('delivers what is queued, refuses later calls and returns the lifetime totals, once', async () => {
    vi.useFakeTimers();
    const received = mockEndpoint();
    const analytics = client();
    analytics.track(track(1));
    analytics.track(track(2));
    const closing = analytics.close();
    expect(analytics.close()).toBe(closing);

    const late = vi.fn();
    const drops: DropEvent[] = [];
    analytics.on('drop', (event) => drops.push(event));
    analytics.track(track(3), late);
    expect(await closing).toEqual({ delivered: 2, failed: 0, dropped: 1 });
    expect(messageIds(received)).toHaveLength(2);
    expect(late.mock.calls[0]![0]).toBeInstanceOf(ClosedError);
    expect(drops[0]).toMatchObject({ reason: 'closed' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resolves by its deadline when the endpoint never answers, reporting what was not delivered', async () => {
    vi.useFakeTimers();
    silentEndpoint();
    const analytics = client({ flushAt: 2, maxInFlight: 1 });
    const callback = vi.fn();
    for (let n = 0; n < 5; n++) analytics.track(track(n), callback);
    const closing = analytics.close({ timeout: 3_000 });
    await vi.advanceTimersByTimeAsync(3_000);

    expect(await closing).toEqual({ delivered: 0, failed: 5, dropped: 0 });
    expect(callback).toHaveBeenCalledTimes(5);
    for (const [error] of callback.mock.calls) expect(error).toBeInstanceOf(CloseTimeoutError);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops a retry loop at the deadline', async () => {
    vi.useFakeTimers();
    const received = mockEndpoint(() => new HttpResponse(null, { status: 500 }));
    const analytics = client({ minRetryDelay: 1_000, maxRetryDelay: 60_000 });
    analytics.track(track(1));
    const closing = analytics.close({ timeout: 5_000 });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await closing).toEqual({ delivered: 0, failed: 1, dropped: 0 });
    expect(received.length).toBeGreaterThan(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects a bad timeout naming it', () => {
    const analytics = client();
    expect(() => analytics.close({ timeout: -1 })).toThrow(/Expected `timeout` to be an integer >= 0 and <= 2147483647, got `-1`/);
  });
});

describe('calls', () => {
  it.each([
    ['identify', { userId: 'u1', traits: { plan: 'pro' } }],
    ['track', track(1)],
    ['page', { userId: 'u1', name: 'Home' }],
    ['screen', { userId: 'u1', name: 'Home' }],
    ['group', { userId: 'u1', groupId: 'g1' }],
    ['alias', { userId: 'u1', previousId: 'anon-1' }],
  ] as const)('%s() refuses a callback that is no function with a ValidationError naming `callback`, queueing nothing', async (method, params) => {
    const received = mockEndpoint();
    const analytics = client({ flushAt: 1 });
    const call = analytics[method] as (params: unknown, callback: unknown) => void;
    expect(() => call.call(analytics, params, 'x')).toThrow(new ValidationError('callback', 'Expected `callback` to be a function, got `"x"` (string)'));
    expect(await analytics.close()).toEqual({ delivered: 0, failed: 0, dropped: 0 });
    expect(received).toEqual([]);
  });
});

describe('events and modes', () => {
  it('on() returns a function that removes the listener', async () => {
    mockEndpoint();
    const analytics = client({ flushAt: 1 });
    const listener = vi.fn();
    const off = analytics.on('flush', listener);
    analytics.track(track(1));
    await analytics.flush();
    off();
    analytics.track(track(2));
    await analytics.flush();
    expect(listener).toHaveBeenCalledTimes(1);
    await analytics.close();
  });

  // Node's EventEmitter takes any name, so a misspelt one is a listener that is never called.
  it('on() refuses an event it never emits, suggesting the one meant, and a listener that is no function', async () => {
    const analytics = client();
    const on = analytics.on.bind(analytics) as (type: unknown, listener: unknown) => () => void;
    expect(() => on('flsh', () => {})).toThrow(expect.objectContaining({ name: 'ConfigError', option: 'flsh', message: 'Unknown event `flsh` of on(): did you mean `flush`?' }));
    expect(() => on('finish', () => {})).toThrow(expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining('it emits `error`, `flush`, `retry`, `rate-limit`, `drop`, `failed`, `request`, `response`') }));
    expect(() => on('flush', 5)).toThrow(expect.objectContaining({ name: 'ConfigError', option: 'listener', message: 'Expected `listener` to be a function, got `5` (number)' }));
    await analytics.close();
  });

  it('disable validates calls, never touches the network and still calls back', async () => {
    const analytics = client({ disable: true });
    const callback = vi.fn();
    analytics.track(track(1), callback);
    expect(() => analytics.track({ userId: 'u' } as never)).toThrow(/event/);
    expect(await analytics.flush()).toEqual({ delivered: 0, failed: 0, dropped: 0 });
    await vi.waitFor(() => expect(callback).toHaveBeenCalledWith());
    await analytics.close();
  });

  it('holds no timer while idle, and one only while messages wait', async () => {
    vi.useFakeTimers();
    mockEndpoint();
    const analytics = client();
    expect(vi.getTimerCount()).toBe(0);
    analytics.track(track(1));
    expect(vi.getTimerCount()).toBe(1);
    await analytics.flush();
    expect(vi.getTimerCount()).toBe(0);
    await analytics.close();
  });
});
