import { HttpResponse } from 'msw';
import { Agent } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ClosedError,
  type Message,
  TimeoutError,
  WebhookDestination,
  type WebhookDestinationOptions,
  WebhookError,
} from '../../src/webhooks/index.js';
import { record } from '../../../../test/helpers/events.js';
import { viaGlobalFetch } from '../../../../test/helpers/endpoint.js';
import { useMockServer } from '../../../../test/helpers/msw-lifecycle.js';
import { mockWebhook } from '../../../../test/helpers/msw-webhooks.js';

useMockServer();

const URL_A = 'https://a.hooks.test/in';
const URL_B = 'https://b.hooks.test/in';
const HOUR = 3_600_000;
/** A URL that never backs off on its own, to see one delivery's retry schedule alone. */
const NO_BREAKER = Number.MAX_SAFE_INTEGER;

const track: Message = {
  type: 'track',
  messageId: 'msg-1',
  timestamp: '2024-03-01T12:30:00.123Z',
  context: {},
  userId: 'u1',
  event: 'Signed Up',
};

const open: WebhookDestination[] = [];
afterEach(async () => {
  for (const dest of open.splice(0)) await dest.close();
});

function destination(urls: string[], options: WebhookDestinationOptions = {}): WebhookDestination {
  const dest = new WebhookDestination({ webhooks: urls.map((url) => ({ url })) }, { fetch: viaGlobalFetch, ...options });
  open.push(dest);
  return dest;
}

/** Whether a promise has settled, without waiting for it. */
function settled(promise: Promise<unknown>): () => boolean {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  return () => done;
}

const reply = (code: number, headers: Record<string, string> = {}) => new HttpResponse(null, { status: code, headers });
const never = () => new Promise<Response>(() => {});

describe('WebhookDestination retries', () => {
  it('waits a jittered, doubling delay between attempts, then delivers', async () => {
    vi.useFakeTimers();
    const requests = mockWebhook(URL_A, (n) => reply(n < 3 ? 503 : 200));
    const dest = destination([URL_A], { minRetryDelay: 1_000, maxRetryDelay: 8_000 });
    const retries = record(dest, 'retry');

    const delivery = dest.deliver(track);
    await vi.advanceTimersByTimeAsync(10_000);

    expect(await delivery).toEqual({ delivered: true, attempts: 4 });
    const delays = retries.map((r) => r.delay);
    expect(delays[0]).toBeGreaterThanOrEqual(500);
    expect(delays[0]).toBeLessThanOrEqual(1_000);
    expect(delays[1]).toBeGreaterThanOrEqual(1_000);
    expect(delays[1]).toBeLessThanOrEqual(2_000);
    expect(delays[2]).toBeGreaterThanOrEqual(2_000);
    expect(delays[2]).toBeLessThanOrEqual(4_000);
    const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
    expect(gaps).toEqual(delays);
  });

  it('gives up retryWindow after the first attempt and reports the last failures', async () => {
    vi.useFakeTimers();
    const requests = mockWebhook(URL_A, () => reply(503));
    // One delivery's own schedule: the URL's backoff across deliveries is destination-isolation's.
    const dest = destination([URL_A], { retryWindow: 60_000, minRetryDelay: 1_000, maxRetryDelay: 10_000, breakerThreshold: NO_BREAKER });
    const failed = record(dest, 'failed');
    const start = Date.now();

    const delivery = dest.deliver(track);
    const done = settled(delivery);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(done()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const result = await delivery;

    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(requests.length);
    expect(requests.length).toBeGreaterThan(5);
    expect(requests.at(-1)!.at - start).toBe(60_000);
    const error = result.error as WebhookError;
    expect(error).toBeInstanceOf(WebhookError);
    expect(error.retryable).toBe(true);
    expect(error.failures).toMatchObject([{ url: URL_A, error: { status: 503 } }]);
    expect(failed).toEqual([{ id: 'msg-1', messageId: 'msg-1', attempts: requests.length, error }]);
  });

  it('retries for 4 hours by default, at most 5 minutes apart', async () => {
    vi.useFakeTimers();
    const requests = mockWebhook(URL_A, () => reply(500));
    const delivery = destination([URL_A], { breakerThreshold: NO_BREAKER }).deliver(track);
    const done = settled(delivery);
    const start = Date.now();

    await vi.advanceTimersByTimeAsync(4 * HOUR - 1);
    expect(done()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);

    expect(await delivery).toMatchObject({ delivered: false, attempts: requests.length });
    expect(requests.at(-1)!.at - start).toBe(4 * HOUR);
    const gaps = requests.slice(1).map((r, i) => r.at - requests[i]!.at);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(300_000);
    expect(gaps[0]).toBeLessThanOrEqual(1_000);
  });

  it('retries a receiver that timed out', async () => {
    vi.useFakeTimers();
    const requests = mockWebhook(URL_A, (n) => (n === 0 ? never() : reply(200)));
    const dest = destination([URL_A], { minRetryDelay: 100 });
    const retries = record(dest, 'retry');

    const delivery = dest.deliver(track);
    await vi.advanceTimersByTimeAsync(5_000 + 100);

    expect(await delivery).toEqual({ delivered: true, attempts: 2 });
    expect(requests).toHaveLength(2);
    expect(retries[0]!.error.failures[0]!.error).toBeInstanceOf(TimeoutError);
  });

  it.each([408, 429])('retries %i as transient', async (code) => {
    vi.useFakeTimers();
    mockWebhook(URL_A, (n) => reply(n === 0 ? code : 200));
    const delivery = destination([URL_A], { minRetryDelay: 100 }).deliver(track);
    await vi.advanceTimersByTimeAsync(100);
    expect(await delivery).toEqual({ delivered: true, attempts: 2 });
  });

  it("waits as long as a 429's Retry-After asks, up to maxRetryDelay", async () => {
    vi.useFakeTimers();
    const requests = mockWebhook(URL_A, (n) => (n < 2 ? reply(429, { 'retry-after': n === 0 ? '30' : '3600' }) : reply(200)));
    const delivery = destination([URL_A], { minRetryDelay: 100, maxRetryDelay: 60_000 }).deliver(track);
    await vi.advanceTimersByTimeAsync(90_000);

    expect(await delivery).toEqual({ delivered: true, attempts: 3 });
    expect(requests[1]!.at - requests[0]!.at).toBe(30_000);
    expect(requests[2]!.at - requests[1]!.at).toBe(60_000);
  });

  it('asks every retryable URL again until one answers 2xx', async () => {
    vi.useFakeTimers();
    const a = mockWebhook(URL_A, () => reply(502));
    const b = mockWebhook(URL_B, (n) => reply(n < 2 ? 503 : 204));
    const dest = destination([URL_A, URL_B], { minRetryDelay: 100 });
    const attempts = record(dest, 'attempt');

    const delivery = dest.deliver(track);
    await vi.advanceTimersByTimeAsync(1_000);

    expect(await delivery).toEqual({ delivered: true, attempts: 3 });
    expect([a.length, b.length]).toEqual([3, 3]);
    expect(attempts.filter((e) => e.attempt === 3).map((e) => [e.url, e.ok, e.status])).toEqual(
      expect.arrayContaining([
        [URL_A, false, 502],
        [URL_B, true, 204],
      ]),
    );
  });
});

describe('WebhookDestination.close()', () => {
  it('ends a pending retry at once: deliver() resolves not delivered, and no timer is left', async () => {
    vi.useFakeTimers();
    mockWebhook(URL_A, () => reply(503));
    const dest = destination([URL_A], { minRetryDelay: 60_000 });
    const failed = record(dest, 'failed');
    const retried = new Promise((resolve) => dest.on('retry', resolve));
    const delivery = dest.deliver(track);
    await retried;

    await dest.close();
    const result = await delivery;

    expect(result).toMatchObject({ delivered: false, attempts: 1 });
    expect(result.error).toBeInstanceOf(ClosedError);
    expect(result.error?.message).toBe('Not delivered: the webhook destination was closed first');
    expect(failed).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('aborts a request in flight', async () => {
    vi.useFakeTimers();
    const requests = mockWebhook(URL_A, never);
    const dest = destination([URL_A]);
    const delivery = dest.deliver(track);
    await vi.waitUntil(() => requests.length === 1);

    await dest.close();

    expect(await delivery).toMatchObject({ delivered: false, attempts: 1, error: { code: 'ERR_CLOSED' } });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers deliver() after close() at once, without a request', async () => {
    const requests = mockWebhook(URL_A, () => reply(200));
    const dest = destination([URL_A]);
    const closing = dest.close();
    expect(dest.close()).toBe(closing);
    await closing;

    expect(await dest.deliver(track)).toMatchObject({ delivered: false, attempts: 0, error: { code: 'ERR_CLOSED' } });
    expect(requests).toHaveLength(0);
  });

  it('leaves a dispatcher it was given open', async () => {
    const agent = new Agent();
    mockWebhook(URL_A, () => reply(200));
    const dest = destination([URL_A], { dispatcher: agent });
    await dest.deliver(track);
    await dest.close();
    expect(agent.closed).toBe(false);
    await agent.close();
  });
});
