import { describe, expect, it, vi } from 'vitest';
import { HttpError, NetworkError } from '../../src/core/errors.js';
import { backoff, retryDelay, sleep, withRetry } from '../../src/http/retry.js';
import { parseRetryAfter } from '../../src/http/transport.js';

const policy = { retries: 3, minDelay: 100, maxDelay: 1_000 };

describe('backoff', () => {
  it('doubles from minDelay with equal jitter and caps at maxDelay', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoff(n, policy, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((n) => backoff(n, policy, () => 1))).toEqual([100, 200, 400, 800, 1_000]);
  });

  it('prefers Retry-After, capped at maxDelay', () => {
    expect(retryDelay(new HttpError(429, '', 300), 1, policy)).toBe(300);
    expect(retryDelay(new HttpError(503, '', 60_000), 1, policy)).toBe(1_000);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('3')).toBe(3_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('withRetry', () => {
  it('retries retryable errors only, then gives the last error', async () => {
    vi.useFakeTimers();
    const attempt = vi.fn(async () => {
      throw new NetworkError('down');
    });
    const done = withRetry(attempt, policy).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await done).toBeInstanceOf(NetworkError);
    expect(attempt).toHaveBeenCalledTimes(4);

    const permanent = vi.fn(async () => {
      throw new HttpError(404, 'no');
    });
    await expect(withRetry(permanent, policy)).rejects.toMatchObject({ status: 404 });
    expect(permanent).toHaveBeenCalledTimes(1);
    vi.useRealTimers();
  });

  it('stops at maxRetryTime', async () => {
    vi.useFakeTimers();
    const attempt = vi.fn(async () => {
      throw new HttpError(500, '');
    });
    const done = withRetry(attempt, { retries: 1_000, minDelay: 1_000, maxDelay: 1_000, maxRetryTime: 10_000 }).catch(() => 'gave up');
    await vi.advanceTimersByTimeAsync(30_000);
    expect(await done).toBe('gave up');
    // One attempt at 0 s, then one a second or so apart until the window closes at 10 s.
    expect(attempt.mock.calls.length).toBeGreaterThanOrEqual(10);
    expect(attempt.mock.calls.length).toBeLessThanOrEqual(21);
    vi.useRealTimers();
  });
});

describe('withRetry attempts', () => {
  it('numbers attempts from 1, reports each failure to onRetry, and resolves with the first success', async () => {
    vi.useFakeTimers();
    const attempt = vi.fn(async (n: number) => {
      if (n < 3) throw new HttpError(503, 'busy');
      return `ok on ${n}`;
    });
    const onRetry = vi.fn();
    const done = withRetry(attempt, policy, { onRetry });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await done).toBe('ok on 3');
    expect(attempt.mock.calls.map(([n]) => n)).toEqual([1, 2, 3]);
    expect(onRetry.mock.calls.map(([info]) => info.attempt)).toEqual([1, 2]);
    vi.useRealTimers();
  });

  it('makes no attempt once the signal has aborted, and rejects with its reason', async () => {
    const controller = new AbortController();
    const reason = new NetworkError('closing');
    controller.abort(reason);
    const attempt = vi.fn(async () => 'sent');
    await expect(withRetry(attempt, policy, { signal: controller.signal })).rejects.toBe(reason);
    expect(attempt).not.toHaveBeenCalled();
  });

  it('gives up after the first failure when no retry is allowed', async () => {
    const attempt = vi.fn(async () => {
      throw new NetworkError('down');
    });
    await expect(withRetry(attempt, { ...policy, retries: 0 })).rejects.toBeInstanceOf(NetworkError);
    expect(attempt).toHaveBeenCalledTimes(1);
  });
});

describe('sleep', () => {
  it('waits out a time longer than one timer holds (2^31 ms), neither at once nor early', async () => {
    vi.useFakeTimers();
    try {
      const started = Date.now();
      let woke: number | undefined;
      const waiting = sleep(2 ** 31 + 5_000).then(() => (woke = Date.now() - started));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(woke).toBeUndefined();
      await vi.advanceTimersByTimeAsync(2 ** 31);
      expect(woke).toBeUndefined();
      await vi.advanceTimersByTimeAsync(4_000);
      await waiting;
      expect(woke).toBe(2 ** 31 + 5_000);
    } finally {
      vi.useRealTimers();
    }
  });
});
