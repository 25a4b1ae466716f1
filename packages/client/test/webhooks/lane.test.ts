// The breaker of one URL: pure logic on the clock it is given (times in ms), no timers.
import { describe, expect, it } from 'vitest';
import { type SlotWaiter, UrlLane } from '../../src/webhooks/lane.js';

const lane = (breakerThreshold = 3) => new UrlLane(0, { maxInProgress: 10, breakerThreshold, minCooldown: 1_000, maxCooldown: 4_000 });

/** One request of delivery `id` at `now`, ended with `outcome`: what release says (whether it closed the breaker). */
function request(url: UrlLane, id: string, now: number, outcome: 'ok' | 'failed' | 'neutral'): boolean {
  expect(url.tryAcquire(now, id)).toBe(true);
  return url.release(outcome, now, id);
}

describe('UrlLane', () => {
  it('holds about twice its live waiters while its requests do not end and other lanes serve the rest, and still serves the live ones in order', () => {
    const url = lane();
    for (let n = 0; n < 10; n++) expect(url.tryAcquire(0, `hanging-${n}`)).toBe(true);
    const woken: number[] = [];
    for (let n = 0; n < 100_000; n++) {
      const waiter: SlotWaiter = { done: false, wake: () => woken.push(n) };
      url.wait(waiter);
      // Served by another lane, as nearly every delivery is while this URL hangs.
      if (n % 1_000 !== 0) waiter.done = true;
    }
    expect(url.waiting).toBeLessThanOrEqual(2_048);
    for (let n = 0; n < 10; n++) url.release('ok', 1_000, `hanging-${n}`);
    expect(woken).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000]);
  });

  it('opens once the requests of breakerThreshold different deliveries failed in a row; one delivery failing again counts once', () => {
    const url = lane(3);
    for (let n = 0; n < 6; n++) request(url, 'poison', n, 'failed');
    request(url, 'a', 10, 'failed');
    expect(url.admits(10)).toBe(true);
    request(url, 'b', 11, 'failed');
    expect(url.admits(11)).toBe(false);
    expect(url.reopensIn(11)).toBe(1_000);
  });

  it('starts counting again after any answer', () => {
    const url = lane(3);
    request(url, 'a', 0, 'failed');
    request(url, 'b', 0, 'failed');
    request(url, 'c', 0, 'ok');
    request(url, 'd', 0, 'failed');
    request(url, 'e', 0, 'failed');
    expect(url.admits(0)).toBe(true);
  });

  it('closes on an answer to any request, the probe or one still in progress when it opened, and says it did', () => {
    const url = lane(2);
    expect(url.tryAcquire(0, 'slow')).toBe(true);
    request(url, 'a', 0, 'failed');
    request(url, 'b', 0, 'failed');
    expect(url.closed).toBe(false);
    expect(url.release('ok', 5, 'slow')).toBe(true);
    expect(url.closed).toBe(true);
    expect(request(url, 'c', 6, 'ok')).toBe(false);
  });

  it('tells the first delivery it refuses to come back when the probe is due, and the others to back off on their own', () => {
    const url = lane(2);
    request(url, 'a', 0, 'failed');
    request(url, 'b', 0, 'failed');
    expect(url.nextTry(100, 'g1')).toBe(900);
    expect(url.nextTry(100, 'g2')).toBeUndefined();
    // The same delivery refused again, before its time: still the one.
    expect(url.nextTry(300, 'g1')).toBe(700);
  });

  it('never tells a delivery whose request failed there since it opened to carry the probe; that one still probes when it finds the URL ready', () => {
    const url = lane(2);
    request(url, 'a', 0, 'failed');
    request(url, 'b', 0, 'failed');
    // The two that opened it.
    expect(url.nextTry(10, 'a')).toBeUndefined();
    expect(url.nextTry(10, 'b')).toBeUndefined();
    expect(url.nextTry(10, 'p')).toBe(990);
    expect(request(url, 'p', 1_000, 'failed')).toBe(false);
    // Open again, for twice as long: the next probe goes to another delivery.
    expect(url.reopensIn(1_000)).toBe(2_000);
    expect(url.nextTry(1_100, 'p')).toBeUndefined();
    expect(url.nextTry(1_100, 'g')).toBe(1_900);
    // Nobody came for the probe: p, back on its own schedule, finds the URL ready and probes.
    expect(url.admits(3_500)).toBe(true);
    request(url, 'p', 3_500, 'failed');
    expect(url.reopensIn(3_500)).toBe(4_000);
  });

  it('lets one probe through at a time; a request that says nothing about the URL lets the next one probe', () => {
    const url = lane(1);
    request(url, 'a', 0, 'failed');
    expect(url.tryAcquire(1_000, 'p')).toBe(true);
    expect(url.tryAcquire(1_000, 'q')).toBe(false);
    url.release('neutral', 1_001, 'p');
    expect(url.tryAcquire(1_001, 'q')).toBe(true);
    expect(url.release('ok', 1_002, 'q')).toBe(true);
  });

  it('doubles the cooldown after each failed probe up to maxCooldown, and starts from minCooldown once closed', () => {
    const url = lane(1);
    request(url, 'a', 0, 'failed');
    let now = 0;
    for (const cooldown of [1_000, 2_000, 4_000, 4_000]) {
      expect(url.reopensIn(now)).toBe(cooldown);
      now += cooldown;
      request(url, 'p', now, 'failed');
    }
    request(url, 'q', now + 4_000, 'ok');
    request(url, 'b', now + 4_000, 'failed');
    expect(url.reopensIn(now + 4_000)).toBe(1_000);
  });
});
