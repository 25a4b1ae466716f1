// `rateLimit`: measured where it matters, at a real loopback receiver.
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ClosedError, WebhookDestination } from '../../src/webhooks/index.js';
import { startClockedReceiver } from '../../../../test/helpers/clocked-receiver.js';
import { startReceiver } from '../../../../test/helpers/receiver.js';
import { latenessChain } from '../../../../test/helpers/timing.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** The most of `times` (ms) that fall in any one window of `width` ms. */
function busiestWindow(times: number[], width = 1_000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; start < sorted.length; start += 1) {
    while (end < sorted.length && sorted[end]! < sorted[start]! + width) end += 1;
    most = Math.max(most, end - start);
  }
  return most;
}

describe('rateLimit', () => {
  it('a URL limited to 50/s never sees more than 50 requests in any one-second window (±1), retries included, and nothing is lost', async () => {
    // Every fifth message is refused once (503) and retried: the retries count against the limit too.
    const hook = await startClockedReceiver({ refuseEvery: 5 });
    cleanup.push(() => hook.close());
    // When each request leaves, on the same clock as the receiver's stamps (ms since the epoch).
    const departures: number[] = [];
    const agent = new Agent().compose((dispatch) => (options, handler) => {
      departures.push(performance.timeOrigin + performance.now());
      return dispatch(options, handler);
    });
    cleanup.push(() => agent.close());
    const dest = new WebhookDestination({ webhooks: [{ url: hook.url, rateLimit: 50 }] }, { minRetryDelay: 10, maxRetryDelay: 20, dispatcher: agent });
    cleanup.push(() => dest.close());

    // Connected first: a new connection's setup delays the first request's arrival, and the
    // receiver would see it bunched with the next, which left on time.
    await dest.deliver({ type: 'track', messageId: 'warm-up-1', userId: 'u', event: 'Warm-up' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const count = 150;
    // Timers of this process paced as the limiter's are, beside it: how late they fire is how much
    // slower than 20 ms the pace may be on this run (see the last assertions).
    const baseline = latenessChain(20);
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: count }, (_, n) => dest.deliver({ type: 'track', messageId: `m-${n}`, userId: 'u', event: 'Burst' })));
    const took = performance.now() - started;
    const late = baseline.stop();
    const arrivals = await hook.arrivals();

    expect(results.filter(({ delivered }) => delivered)).toHaveLength(count);
    expect(arrivals).toHaveLength(1 + count + count / 5);
    expect(departures).toHaveLength(arrivals.length);
    // The limit, where the requests leave.
    expect(busiestWindow(departures)).toBeLessThanOrEqual(51);
    // And where they arrive: a request the receiver's process stamped late (it shares the machine)
    // makes the ones after it look bunched; by at most as many 20 ms turns as the slowest trip took
    // longer than the fastest (measured on this run: 0 on an idle machine, so ≤ 51 there).
    const trips = arrivals.map((at, n) => at - departures[n]!);
    const spread = Math.max(...trips) - Math.min(...trips);
    expect(busiestWindow(arrivals)).toBeLessThanOrEqual(51 + Math.floor(spread / 20));

    // A queue at about the allowed pace, not a much slower one. A turn up to 2 ms late keeps the
    // pace; a later one restarts it from then rather than catching up in a burst. So the pace this
    // run allows is 20 ms plus the baseline timers' lateness beyond those 2 ms (0 on an idle
    // machine, where the bounds are 45 and 1.15 × 20 ms a request).
    const pace = 20 + late.reduce((sum, ms) => sum + (ms > 2 ? ms : 0), 0) / Math.max(1, late.length);
    expect(busiestWindow(arrivals)).toBeGreaterThanOrEqual(Math.floor((45 * 20) / pace));
    expect(took).toBeGreaterThanOrEqual((arrivals.length - 2) * 20 - 20);
    expect(took).toBeLessThan((arrivals.length - 2) * pace * 1.15);
  }, 15_000);

  it('limits only its own URL: another URL of the same destination gets every message at once', async () => {
    const fast = await startReceiver();
    const limited = await startReceiver();
    cleanup.push(() => fast.close(), () => limited.close());
    const dest = new WebhookDestination({ webhooks: [{ url: limited.url, rateLimit: 5 }, { url: fast.url }] });
    cleanup.push(() => dest.close());
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => dest.deliver({ type: 'track', messageId: `m-${n}`, userId: 'u', event: 'Two URLs' })));
    const took = performance.now() - started;
    expect(results.every(({ delivered }) => delivered)).toBe(true);
    expect(fast.requests).toHaveLength(20);
    // Not paced with the limited URL, where 20 take 19 turns of 200 ms.
    expect(took).toBeLessThan(19 * 200);
    // The limited URL has had only its share meanwhile (one turn every 200 ms of the time this
    // took on this run, ±1); the rest waits its turn.
    expect(limited.requests.length).toBeLessThanOrEqual(2 + Math.floor(took / 200));
    expect(limited.requests.length).toBeLessThan(20);
  });

  it('close() ends the requests waiting for their turn at once: not delivered, a ClosedError each, no rejection left', async () => {
    const hook = await startReceiver();
    cleanup.push(() => hook.close());
    const dest = new WebhookDestination({ webhooks: [{ url: hook.url, rateLimit: 1 }] });
    const sent = performance.now();
    const pending = Array.from({ length: 5 }, (_, n) => dest.deliver({ type: 'track', messageId: `m-${n}`, userId: 'u', event: 'Queued' }));
    expect(await pending[0]).toMatchObject({ delivered: true });
    await dest.close();
    const results = await Promise.all(pending);
    // Before the second turn, due a second after the first request left: none waited for it.
    expect(performance.now() - sent).toBeLessThan(1_000);
    expect(results.filter(({ delivered }) => delivered)).toHaveLength(1);
    for (const { delivered, error } of results.filter((result) => !result.delivered)) {
      expect(delivered).toBe(false);
      expect(error).toBeInstanceOf(ClosedError);
    }
    expect(hook.requests).toHaveLength(1);
  });
});
