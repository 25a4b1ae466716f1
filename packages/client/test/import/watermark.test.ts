import { describe, expect, it } from 'vitest';
import { Watermark } from '../../src/import/watermark.js';

describe('Watermark', () => {
  it('advances only over an unbroken run of settled lines', () => {
    const mark = new Watermark(0);
    mark.settle(2);
    mark.settle(3);
    expect(mark.value).toBe(0);
    mark.settle(1);
    expect(mark.value).toBe(3);
    mark.settle(5);
    expect(mark.value).toBe(3);
    mark.settle(4);
    expect(mark.value).toBe(5);
  });

  it('starts from the lines already settled (a resumed import)', () => {
    const mark = new Watermark(41);
    expect(mark.value).toBe(41);
    mark.settle(42);
    expect(mark.value).toBe(42);
  });
});
