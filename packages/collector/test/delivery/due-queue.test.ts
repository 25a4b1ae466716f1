import { describe, expect, it } from 'vitest';
import { DueQueue } from '../../src/delivery/due-queue.js';

/** Takes everything due at `now`, in the order handed out. */
function drain<T>(queue: DueQueue<T>, now: number): T[] {
  const taken: T[] = [];
  for (let next = queue.takeDue(now); next !== undefined; next = queue.takeDue(now)) taken.push(next.item);
  return taken;
}

describe('DueQueue', () => {
  it('hands out only what is due, earliest first, and in order among equal times', () => {
    const queue = new DueQueue<string>();
    const times = [50, 10, 30, 10, 70, 10, 30];
    times.forEach((due, order) => queue.add(`i${order}`, due, order));
    expect(queue.nextDue).toBe(10);
    expect(drain(queue, 30)).toEqual(['i1', 'i3', 'i5', 'i2', 'i6']);
    expect(queue.takeDue(49)).toBeUndefined();
    expect(drain(queue, Number.POSITIVE_INFINITY)).toEqual(['i0', 'i4']);
    expect(queue.nextDue).toBeUndefined();
  });

  it('sorts thousands of random times as a sort would', () => {
    const queue = new DueQueue<number>();
    const times = Array.from({ length: 5_000 }, (_, i) => ((i * 7_919) % 1_000) * 3);
    times.forEach((due, order) => queue.add(order, due, order));
    const expected = times.map((due, order) => ({ due, order })).sort((a, b) => a.due - b.due || a.order - b.order).map(({ order }) => order);
    expect(drain(queue, Number.POSITIVE_INFINITY)).toEqual(expected);
  });

  it('replaces its items on reset', () => {
    const queue = new DueQueue<string>();
    for (let i = 0; i < 10; i++) queue.add(`old${i}`, i, i);
    queue.reset([
      { item: 'b', due: 5, order: 2 },
      { item: 'a', due: 5, order: 1 },
    ]);
    expect(queue.size).toBe(2);
    expect(drain(queue, 5)).toEqual(['a', 'b']);
  });
});
