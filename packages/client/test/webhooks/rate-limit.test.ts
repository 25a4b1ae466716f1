import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimit } from '../../src/webhooks/rate-limit.js';

// Pure time logic: the clock is faked, so every figure is exact.
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Takes `count` turns at once and records, on the fake clock, when each one was let through. */
function takeAll(limit: RateLimit, count: number): { starts: number[]; done: Promise<unknown> } {
  const starts: number[] = [];
  const turns = Array.from({ length: count }, async (_, n) => {
    await limit.take();
    starts[n] = performance.now();
  });
  return { starts, done: Promise.all(turns) };
}

describe('RateLimit', () => {
  it('lets the first request through at once, then one every 1000 / perSecond ms, in the order they asked', async () => {
    const limit = new RateLimit(50);
    const origin = performance.now();
    const { starts, done } = takeAll(limit, 120);
    await vi.runAllTimersAsync();
    await done;
    const offsets = starts.map((start) => start - origin);
    expect(offsets[0]).toBe(0);
    for (let n = 1; n < offsets.length; n += 1) expect(offsets[n]! - offsets[n - 1]!).toBeGreaterThanOrEqual(20);
    // Nothing waits longer than its place in the queue requires.
    expect(offsets.at(-1)).toBeLessThanOrEqual(119 * 20 + 1);
  });

  it('never lets more than perSecond through in any one-second window', async () => {
    const limit = new RateLimit(50);
    const { starts, done } = takeAll(limit, 200);
    await vi.runAllTimersAsync();
    await done;
    const most = Math.max(...starts.map((from) => starts.filter((start) => start >= from && start < from + 1000).length));
    expect(most).toBe(50);
  });

  it('does not catch up in a burst after a late turn: spacing counts from when a request really started', async () => {
    // A busy event loop is what makes timers late, so this one runs on the real clock.
    vi.useRealTimers();
    const limit = new RateLimit(10);
    expect(limit.take()).toBeUndefined();
    const when: number[] = [];
    const turns = [limit.take()!, limit.take()!].map((turn) => turn.then(() => when.push(performance.now())));
    const busyUntil = performance.now() + 350;
    while (performance.now() < busyUntil); // both turns fall due meanwhile
    await Promise.all(turns);
    // Caught up, they would be microseconds apart. Each time is read a little after its grant,
    // the first later than the second by a few µs at times (99.991 ms seen): 1 ms of slack.
    expect(when[1]! - when[0]!).toBeGreaterThanOrEqual(99);
  });

  it('lets a request through at once when the last one is at least an interval ago', async () => {
    const limit = new RateLimit(4);
    expect(limit.take()).toBeUndefined();
    expect(limit.take()).toBeInstanceOf(Promise);
    await vi.advanceTimersByTimeAsync(250);
    await vi.advanceTimersByTimeAsync(250);
    expect(limit.take()).toBeUndefined();
  });

  it('close() rejects every waiting request and every later one with its reason, and leaves no timer', async () => {
    const limit = new RateLimit(1);
    limit.take();
    const waiting = [limit.take()!, limit.take()!];
    const reason = new Error('closed');
    limit.close(reason);
    await Promise.all(waiting.map((turn) => expect(turn).rejects.toBe(reason)));
    await expect(limit.take()).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });
});
