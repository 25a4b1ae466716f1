import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HttpError, RateLimitError } from '../../src/index.js';
import { RateLimit } from '../../src/http/rate-limit.js';

// Pure time logic: the wire is covered by test/client/rate-limit.test.ts.

const refusal = (status: number, retryAfter?: number) => new HttpError(status, 'slow down', retryAfter);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RateLimit', () => {
  it('pauses only for a 429 or 503 that carries Retry-After, and at least 1 s', () => {
    const limit = new RateLimit(60_000);
    expect(limit.pause(refusal(500, 5_000))).toBeUndefined();
    expect(limit.pause(refusal(429))).toBeUndefined();
    expect(limit.pause(new Error('reset'))).toBeUndefined();
    expect(limit.active).toBe(false);
    expect(limit.pause(refusal(429, 0))).toMatchObject({ delay: 1_000, status: 429 });
    expect(limit.pause(refusal(503, 2_000))).toMatchObject({ delay: 2_000, status: 503 });
    expect(limit.active).toBe(true);
  });

  it('keeps every waiter until the latest end any refusal gave', async () => {
    const limit = new RateLimit(60_000);
    limit.pause(refusal(429, 1_000));
    let woke = 0;
    const waiting = limit.wait(new AbortController().signal).then(() => (woke = Date.now()));
    const started = Date.now();
    await vi.advanceTimersByTimeAsync(500);
    limit.pause(refusal(429, 2_000));
    await vi.advanceTimersByTimeAsync(3_000);
    await waiting;
    expect(woke - started).toBe(2_500);
  });

  it('fails a wait that would end past maxRateLimitDuration from the first refusal since the last success', async () => {
    const limit = new RateLimit(10_000);
    const signal = new AbortController().signal;
    limit.pause(refusal(429, 6_000));
    const first = limit.wait(signal);
    await vi.advanceTimersByTimeAsync(6_000);
    await first;
    // Still refused: the run now reaches 12 s, past the 10 s allowed.
    limit.pause(refusal(429, 6_000));
    await expect(limit.wait(signal)).rejects.toEqual(new RateLimitError(429, 10_000));

    // A success ends the run: the same refusal is waited out again.
    limit.resume();
    expect(limit.active).toBe(false);
    limit.pause(refusal(429, 6_000));
    const again = limit.wait(signal);
    await vi.advanceTimersByTimeAsync(6_000);
    await expect(again).resolves.toBeUndefined();
  });

  it('ends a wait with the reason of its signal', async () => {
    const limit = new RateLimit(60_000);
    const abort = new AbortController();
    limit.pause(refusal(429, 30_000));
    const waiting = limit.wait(abort.signal);
    abort.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('deadline');
    expect(vi.getTimerCount()).toBe(0);
  });
});
