import { describe, expect, it } from 'vitest';
import { Throttle } from '../../src/core/throttle.js';

describe('Throttle', () => {
  it('lets the first of each kind through, holds the rest back for the interval, then counts them into the next', () => {
    let now = 0;
    const throttle = new Throttle(1_000, () => now);
    expect(throttle.admit('full')).toBe(0);
    expect(throttle.admit('other')).toBe(0);
    now = 999;
    expect([throttle.admit('full'), throttle.admit('full')]).toEqual([undefined, undefined]);
    now = 1_000;
    expect(throttle.admit('full')).toBe(2);
    expect(throttle.admit('full')).toBeUndefined();
    throttle.clear();
    expect(throttle.admit('full')).toBe(0);
  });

  it('tells when a kind may go through again, and lets its latest held back one through at once', () => {
    let now = 0;
    const throttle = new Throttle(1_000, () => now);
    expect(throttle.endsIn('full')).toBe(0);
    throttle.admit('full');
    now = 400;
    expect([throttle.admit('full'), throttle.admit('full')]).toEqual([undefined, undefined]);
    expect(throttle.endsIn('full')).toBe(600);
    now = 1_000;
    expect(throttle.release('full')).toBe(2);
    // Released, it starts an interval of its own.
    expect(throttle.endsIn('full')).toBe(1_000);
    expect(throttle.admit('full')).toBeUndefined();
  });

  it('still counts the ones held back of a kind among many that went quiet and were forgotten', () => {
    let now = 0;
    const throttle = new Throttle(1_000, () => now);
    throttle.admit('held');
    throttle.admit('held');
    for (let n = 0; n < 1_000; n += 1) throttle.admit(`url-${n}`);
    now = 1_000;
    for (let n = 1_000; n < 2_000; n += 1) expect(throttle.admit(`url-${n}`)).toBe(0);
    expect(throttle.admit('url-0')).toBe(0);
    expect(throttle.admit('held')).toBe(1);
  });
});
