// WebhookDestination.attemptOnce: one attempt against real loopback receivers, and what it says
// comes next; the collector keeps that schedule in its store.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Message, prepareWebhook, WebhookDestination, type WebhookDestinationOptions, WebhookError } from '../../src/webhooks/index.js';
import { record } from '../../../../test/helpers/events.js';
import { type Receiver, type Reply, startReceiver, status } from '../../../../test/helpers/receiver.js';

const track: Message = { type: 'track', messageId: 'msg-1', timestamp: '2024-03-01T12:30:00.123Z', context: {}, userId: 'u1', event: 'Signed Up' };

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const closing of open.splice(0)) await closing.close();
});

async function receivers(...replies: Reply[]): Promise<Receiver[]> {
  const started = await Promise.all(replies.map((reply) => startReceiver(reply)));
  open.push(...started);
  return started;
}

function destination(hooks: Receiver[], options: WebhookDestinationOptions = {}): WebhookDestination {
  const made = new WebhookDestination({ webhooks: hooks.map(({ url }) => ({ url })) }, { minRetryDelay: 1_000, maxRetryDelay: 8_000, ...options });
  open.unshift(made);
  return made;
}

describe('WebhookDestination.attemptOnce', () => {
  it('says delivered when a receiver answers 2xx, and emits the events deliver() emits', async () => {
    const [hook] = await receivers(status(200));
    const dest = destination([hook!]);
    const attempts = record(dest, 'attempt');
    const delivered = record(dest, 'delivered');
    await expect(dest.attemptOnce(prepareWebhook(track), { id: 'd1', attempt: 3 })).resolves.toEqual({ outcome: 'delivered' });
    expect(hook!.requests).toHaveLength(1);
    expect(attempts).toEqual([expect.objectContaining({ id: 'd1', attempt: 3, index: 0, ok: true, status: 200 })]);
    expect(delivered).toEqual([expect.objectContaining({ id: 'd1', attempts: 3 })]);
  });

  it('asks a URL that was full when the attempt started as soon as it frees a slot, instead of waiting for a URL that does not answer', async () => {
    // The first URL never answers; the second holds its first request until told to answer.
    let answerFirst: () => void = () => undefined;
    const [silent, busy] = await receivers(
      () => undefined,
      (_, res, n) => {
        if (n === 0) answerFirst = () => res.writeHead(200).end();
        else res.writeHead(200).end();
      },
    );
    const dest = destination([silent!, busy!], { maxRequestsPerUrl: 1, timeout: 5_000 });
    const first = dest.attemptOnce(prepareWebhook({ ...track, messageId: 'm1' }), { id: 'd1', attempt: 1, targets: [1] });
    await vi.waitFor(() => expect(busy!.requests).toHaveLength(1));
    // The busy URL is full, the silent one has room: the attempt goes there, and waits for the busy one's slot.
    const second = dest.attemptOnce(prepareWebhook({ ...track, messageId: 'm2' }), { id: 'd2', attempt: 1 });
    await vi.waitFor(() => expect(silent!.requests).toHaveLength(1));
    answerFirst();
    await expect(first).resolves.toEqual({ outcome: 'delivered' });
    await expect(second).resolves.toEqual({ outcome: 'delivered' });
    expect(busy!.requests.map((request) => (JSON.parse(request.raw.toString()) as { messageId: string }).messageId)).toEqual(['m1', 'm2']);
  });

  it('says retry after the backoff of its attempt number, to the receivers whose failure may heal', async () => {
    const [gone, down] = await receivers(status(410), status(503));
    const dest = destination([gone!, down!]);
    const retries = record(dest, 'retry');
    const first = await dest.attemptOnce(prepareWebhook(track), { attempt: 1 });
    expect(first).toMatchObject({ outcome: 'retry', targets: [1], error: expect.any(WebhookError) });
    // Equal jitter: half of minRetryDelay fixed, half random.
    expect((first as { retryIn: number }).retryIn).toBeGreaterThanOrEqual(500);
    expect((first as { retryIn: number }).retryIn).toBeLessThanOrEqual(1_000);
    expect(retries).toEqual([expect.objectContaining({ attempt: 1, delay: (first as { retryIn: number }).retryIn, urls: [down!.url] })]);

    const fourth = await dest.attemptOnce(prepareWebhook(track), { attempt: 4, targets: [1] });
    expect((fourth as { retryIn: number }).retryIn).toBeGreaterThanOrEqual(4_000);
    expect((fourth as { retryIn: number }).retryIn).toBeLessThanOrEqual(8_000);
    // The receiver that refused for good was not asked again.
    expect(gone!.requests).toHaveLength(1);
    expect(down!.requests).toHaveLength(2);
  });

  it('waits as long as a Retry-After asks, capped by maxRetryDelay', async () => {
    const [busy] = await receivers(status(429, { 'retry-after': '5' }));
    const result = await destination([busy!]).attemptOnce(prepareWebhook(track), { attempt: 1 });
    expect(result).toMatchObject({ outcome: 'retry', retryIn: 5_000 });
  });

  it('parks a delivery its open breaker refused, unsent, between its backoff and maxRetryDelay; the next probe comes at once', async () => {
    const [down] = await receivers(status(503));
    const dest = destination([down!], { breakerThreshold: 1, maxRetryDelay: 60_000 });
    const opened = await dest.attemptOnce(prepareWebhook(track), { id: 'opens', attempt: 1 });
    expect(opened).toMatchObject({ outcome: 'retry' });
    // The first refused is told to carry the probe, when the breaker lets it through (minRetryDelay).
    const carrier = await dest.attemptOnce(prepareWebhook(track), { id: 'carrier', attempt: 1 });
    expect((carrier as { retryIn: number }).retryIn).toBeLessThanOrEqual(1_000);
    const waits: number[] = [];
    for (let n = 0; n < 200; n++) {
      const refused = await dest.attemptOnce(prepareWebhook(track), { id: `parked-${n}`, attempt: 1 });
      expect(refused).toMatchObject({ outcome: 'retry', targets: [0] });
      waits.push((refused as { retryIn: number }).retryIn);
    }
    expect(down!.requests).toHaveLength(1);
    // Spread over the range: a backlog comes back a few at a time, not all at each backoff step.
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(500);
    expect(Math.max(...waits)).toBeLessThanOrEqual(60_000);
    expect(waits.filter((wait) => wait > 30_000).length).toBeGreaterThan(60);
    expect(waits.filter((wait) => wait < 30_000).length).toBeGreaterThan(60);
  });

  it('says which targets a retry waits for only because their URL backs off: refused by its breaker, or its probe failed; not a receiver that turned the message down', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const [down] = await receivers(status(503));
      const dest = destination([down!], { breakerThreshold: 2 });
      const attempt = (id: string) => dest.attemptOnce(prepareWebhook(track), { id, attempt: 1 });
      // Two messages turned down: the second opens the breaker.
      expect(await attempt('a')).toMatchObject({ outcome: 'retry', targets: [0], waitingFor: [] });
      expect(await attempt('b')).toMatchObject({ outcome: 'retry', targets: [0], waitingFor: [] });
      expect(await attempt('refused')).toMatchObject({ outcome: 'retry', targets: [0], waitingFor: [0] });
      expect(down!.requests).toHaveLength(2);
      // Once the breaker lets a probe through (after minRetryDelay), the probe fails: the URL is still down.
      vi.setSystemTime(Date.now() + 1_000);
      expect(await attempt('probe')).toMatchObject({ outcome: 'retry', targets: [0], waitingFor: [0] });
      expect(down!.requests).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('says failed when every receiver refused for good, or the retry window from receivedAt has run out', async () => {
    const [gone, down] = await receivers(status(400), status(503));
    const refused = destination([gone!]);
    const failed = record(refused, 'failed');
    expect(await refused.attemptOnce(prepareWebhook(track), { id: 'x', attempt: 1 })).toMatchObject({ outcome: 'failed', error: { retryable: false } });
    expect(failed).toEqual([expect.objectContaining({ id: 'x', attempts: 1 })]);

    const late = destination([down!], { retryWindow: 60_000 });
    const old = prepareWebhook(track, Date.now() - 61_000);
    expect(await late.attemptOnce(old, { attempt: 7 })).toMatchObject({ outcome: 'failed', error: { retryable: true } });
    // Within the window, the last wait ends with it.
    const near = await late.attemptOnce(prepareWebhook(track, Date.now() - 59_800), { attempt: 9 });
    expect(near).toMatchObject({ outcome: 'retry' });
    expect((near as { retryIn: number }).retryIn).toBeLessThanOrEqual(200);
  });

  it('says closed, without a request, after close(); and for an attempt close() cut short', async () => {
    const hanging: Reply = () => undefined;
    const [slow] = await receivers(hanging);
    const dest = destination([slow!]);
    const cut = dest.attemptOnce(prepareWebhook(track), { attempt: 1 });
    await slow!.nth(1);
    await dest.close();
    await expect(cut).resolves.toMatchObject({ outcome: 'closed' });
    await expect(dest.attemptOnce(prepareWebhook(track), { attempt: 2 })).resolves.toMatchObject({ outcome: 'closed' });
    expect(slow!.requests).toHaveLength(1);
  });
});
