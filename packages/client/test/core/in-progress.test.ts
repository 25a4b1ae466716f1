import { describe, expect, it } from 'vitest';
import { InProgress } from '../../src/core/in-progress.js';

function deferred(): { promise: Promise<string>; resolve: (value: string) => void; reject: (error: Error) => void } {
  let resolve!: (value: string) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<string>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('InProgress', () => {
  it('settles once everything running has ended, a failure included, and forgets what ended', async () => {
    const running = new InProgress();
    const a = deferred();
    const b = deferred();
    expect(await running.track(Promise.resolve('now'))).toBe('now');
    const tracked = [running.track(a.promise), running.track(b.promise).catch((error: Error) => error.message)];
    expect(running.size).toBe(2);
    let settled = false;
    const waiting = running.settled().then(() => (settled = true));
    a.resolve('a');
    await tracked[0];
    expect(settled).toBe(false);
    b.reject(new Error('b failed'));
    await waiting;
    expect(await Promise.all(tracked)).toEqual(['a', 'b failed']);
    expect(running.size).toBe(0);
  });

  it('settles at once with nothing running', async () => {
    await expect(new InProgress().settled()).resolves.toBeUndefined();
  });
});
