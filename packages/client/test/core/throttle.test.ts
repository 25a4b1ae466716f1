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
});
