import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  BackingOffError,
  type Message,
  WebhookDestination,
  type WebhookDestinationOptions,
  type WebhookError,
  type WebhookSettings,
} from '../../src/webhooks/index.js';
import { viaGlobalFetch } from '../../../../test/helpers/endpoint.js';
import { record } from '../../../../test/helpers/events.js';
import { useMockServer } from '../../../../test/helpers/msw-lifecycle.js';
import { mockWebhook } from '../../../../test/helpers/msw-webhooks.js';
import { type Receiver, type Reply, startReceiver, status } from '../../../../test/helpers/receiver.js';

useMockServer();

const message = (n: number): Message => ({
  type: 'track',
  messageId: `msg-${n}`,
  timestamp: '2024-03-01T12:30:00.123Z',
  context: {},
  userId: 'u1',
  event: 'Signed Up',
});

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

async function receiver(reply?: Reply): Promise<Receiver> {
  const started = await startReceiver(reply);
  cleanup.push(started.close);
  return started;
}

function destination(settings: WebhookSettings, options: WebhookDestinationOptions = {}): WebhookDestination {
  const created = new WebhookDestination(settings, options);
  cleanup.push(() => created.close());
  return created;
}

const messageIdOf = (raw: string) => (JSON.parse(raw) as { messageId: string }).messageId;

/** Never answers: a receiver that stalls until the destination's timeout. */
const stall: Reply = () => undefined;

describe('WebhookDestination isolation between URLs (loopback receivers)', () => {
  it('settles on the first 2xx without waiting for a URL that stalls, and does not ask it again', async () => {
    const healthy = await receiver(status(200));
    const stalled = await receiver(stall);
    const dest = destination({ webhooks: [{ url: stalled.url }, { url: healthy.url }] }, { timeout: 60_000 });
    const delivered = record(dest, 'delivered');

    const started = performance.now();
    expect(await dest.deliver(message(1))).toEqual({ delivered: true, attempts: 1 });

    // Far below the 60 s timeout: only the healthy URL was waited for.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(delivered).toMatchObject([{ accepted: [{ index: 1, url: healthy.url, status: 200 }] }]);
    await stalled.nth(1);
    expect(stalled.requests).toHaveLength(1);
  });

  it('bounds the requests in progress per URL; a full URL never holds back deliveries another URL can take', async () => {
    const healthy = await receiver(status(200));
    const stalled = await receiver(stall);
    const dest = destination({ webhooks: [{ url: stalled.url }, { url: healthy.url }] }, { timeout: 60_000, maxRequestsPerUrl: 3 });

    const results = await Promise.all(Array.from({ length: 40 }, (_, n) => dest.deliver(message(n))));

    expect(results.every((result) => result.delivered && result.attempts === 1)).toBe(true);
    expect(healthy.requests).toHaveLength(40);
    // Only as many as its lane holds: the other deliveries went to the healthy URL alone.
    await stalled.nth(3);
    expect(stalled.requests).toHaveLength(3);
  });

  it('close() ends deliveries waiting for a slot at once, with a ClosedError', async () => {
    const stalled = await receiver(stall);
    const dest = new WebhookDestination({ webhooks: [{ url: stalled.url }] }, { timeout: 60_000, maxRequestsPerUrl: 2 });
    const deliveries = Array.from({ length: 10 }, (_, n) => dest.deliver(message(n)));
    await stalled.nth(2);

    await dest.close();
    const results = await Promise.all(deliveries);
    expect(results.every((result) => !result.delivered && result.error?.name === 'ClosedError')).toBe(true);
    expect(stalled.requests).toHaveLength(2);
  });

  it('keeps nothing of a delivery another URL took while a URL that does not answer still has it queued', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const healthy = await receiver(status(200));
    const stalled = await receiver(stall);
    const dest = destination({ webhooks: [{ url: stalled.url }, { url: healthy.url }] }, { timeout: 60_000, maxRequestsPerUrl: 4 });
    // The stalled URL's four slots fill and stay full until the timeout.
    await Promise.all(Array.from({ length: 4 }, (_, n) => dest.deliver(message(n))));
    await stalled.nth(4);
    // The heap after a full collection (the bytes sent are freed off the heap a moment later, so
    // they would make the figure depend on timing).
    const held = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const before = held();

    // One at a time: each finds room at the healthy URL and none at the stalled one, where it
    // waits for a slot until the healthy URL's 200 settles it. 500 of them stay under the lane's
    // first sweep (1,024), so each is still queued there at the end.
    const padding = 'x'.repeat(32 * 1024);
    for (let n = 4; n < 504; n++) expect(await dest.deliver({ ...message(n), properties: { padding } })).toEqual({ delivered: true, attempts: 1 });

    expect(healthy.requests).toHaveLength(504);
    expect(stalled.requests).toHaveLength(4);
    // What the test's receiver kept of them is not the destination's.
    healthy.requests.splice(0);
    // Their bodies as text alone are 16 MB.
    expect(held() - before).toBeLessThan(4 * 1024 * 1024);
  });

  it('never has more than maxRequestsPerUrl requests in progress to a slow URL', async () => {
    let inProgress = 0;
    let peak = 0;
    const slow = await receiver((_request, res) => {
      inProgress += 1;
      peak = Math.max(peak, inProgress);
      setTimeout(() => {
        inProgress -= 1;
        res.writeHead(200).end();
      }, 20);
    });
    const dest = destination({ webhooks: [{ url: slow.url }] }, { maxRequestsPerUrl: 4 });

    const results = await Promise.all(Array.from({ length: 30 }, (_, n) => dest.deliver(message(n))));

    expect(results.every((result) => result.delivered)).toBe(true);
    expect(slow.requests).toHaveLength(30);
    expect(peak).toBe(4);
  });
});

describe('WebhookDestination backoff of a failing URL (mocked, fake timers)', () => {
  const FAILING = 'https://failing.hooks.test/in';
  const HEALTHY = 'https://healthy.hooks.test/in';
  const options = { fetch: viaGlobalFetch, breakerThreshold: 3, minRetryDelay: 1_000, maxRetryDelay: 8_000 };

  it('stops asking a URL after breakerThreshold failures in a row, probes it after the cooldown, and doubles the cooldown', async () => {
    vi.useFakeTimers();
    const failing = mockWebhook(FAILING, () => new HttpResponse(null, { status: 503 }));
    const healthy = mockWebhook(HEALTHY, () => new HttpResponse(null, { status: 200 }));
    const dest = destination({ webhooks: [{ url: FAILING }, { url: HEALTHY }] }, options);
    const deliverAll = async (count: number) => {
      for (let n = 0; n < count; n++) expect(await dest.deliver(message(n))).toEqual({ delivered: true, attempts: 1 });
    };

    await deliverAll(10);
    expect(failing).toHaveLength(3);
    expect(healthy).toHaveLength(10);
    expect(dest.breakers()).toEqual([
      { url: FAILING, open: true },
      { url: HEALTHY, open: false },
    ]);

    await vi.advanceTimersByTimeAsync(999);
    await deliverAll(1);
    expect(failing).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(1);
    await deliverAll(3);
    // One probe, which failed: closed again, now for 2 s.
    expect(failing).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(1_999);
    await deliverAll(1);
    expect(failing).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(1);
    await deliverAll(1);
    expect(failing).toHaveLength(5);
  });

  it.each([200, 400])('takes a URL back once its probe gets any answer (%i: the URL is up)', async (answer) => {
    vi.useFakeTimers();
    const failing = mockWebhook(FAILING, (n) => new HttpResponse(null, { status: n < 3 ? 500 : answer }));
    mockWebhook(HEALTHY, () => new HttpResponse(null, { status: 200 }));
    const dest = destination({ webhooks: [{ url: FAILING }, { url: HEALTHY }] }, options);
    for (let n = 0; n < 5; n++) await dest.deliver(message(n));
    expect(failing).toHaveLength(3);

    await vi.advanceTimersByTimeAsync(1_000);
    for (let n = 0; n < 5; n++) await dest.deliver(message(n));
    expect(failing).toHaveLength(8);
    expect(dest.breakers().map((breaker) => breaker.open)).toEqual([false, false]);
  });

  it('probes with a delivery the breaker refused, not with the one that keeps failing: a message the URL never takes does not keep it closed', async () => {
    vi.useFakeTimers();
    // Backoffs without jitter: 500 ms, then 1 s.
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const mocked = mockWebhook(FAILING, (n) => new HttpResponse(null, { status: messageIdOf(mocked[n]!.raw) === 'msg-0' ? 503 : 200 }));
    const requests = () => mocked.map(({ raw }) => messageIdOf(raw));
    const dest = destination({ webhooks: [{ url: FAILING }] }, { ...options, breakerThreshold: 1, minRetryDelay: 1_000, maxRetryDelay: 1_000 });
    const recovered = record(dest, 'recovered');

    const poison = dest.deliver(message(0));
    await vi.advanceTimersByTimeAsync(0);
    const healthy = [1, 2, 3].map((n) => dest.deliver(message(n)));
    await vi.advanceTimersByTimeAsync(2_000);

    // msg-1, refused first, came back for the probe at 1 s; msg-0 backs off on its own.
    expect(requests().slice(0, 2)).toEqual(['msg-0', 'msg-1']);
    expect(recovered[0]).toEqual({ index: 0, url: FAILING });
    // msg-0's next failure may open the breaker again, for the others' next probe.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await Promise.all(healthy)).toMatchObject([{ delivered: true }, { delivered: true }, { delivered: true }]);
    await dest.close();
    expect(await poison).toMatchObject({ delivered: false });
    expect(requests().filter((id) => id === 'msg-0').length).toBeGreaterThan(1);
  });

  it('when every URL backs off, waits until the first may be probed, reporting BackingOffError', async () => {
    vi.useFakeTimers();
    const failing = mockWebhook(FAILING, (n) => new HttpResponse(null, { status: n < 3 ? 503 : 200 }));
    const dest = destination({ webhooks: [{ url: FAILING }] }, { ...options, breakerThreshold: 1, minRetryDelay: 10_000, maxRetryDelay: 10_000 });
    const retries = record(dest, 'retry');

    const first = dest.deliver(message(1));
    await vi.advanceTimersByTimeAsync(0);
    expect(failing).toHaveLength(1);
    const second = dest.deliver(message(2));
    await vi.advanceTimersByTimeAsync(0);
    // The second delivery sent nothing: the URL backs off for 10 s.
    expect(failing).toHaveLength(1);
    const backingOff = retries.find((r) => r.id === 'msg-2')!;
    expect((backingOff.error as WebhookError).failures[0]!.error).toBeInstanceOf(BackingOffError);
    expect(backingOff.delay).toBe(10_000);

    await vi.advanceTimersByTimeAsync(60_000);
    expect(await first).toMatchObject({ delivered: true });
    expect(await second).toMatchObject({ delivered: true });
  });
});
