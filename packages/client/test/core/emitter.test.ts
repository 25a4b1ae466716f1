import { describe, expect, it } from 'vitest';
import { Emitter } from '../../src/core/emitter.js';

interface Events {
  tick: number;
}

describe('Emitter', () => {
  it('calls the listeners there were when an emit started, once each, until they are removed', () => {
    const emitter = new Emitter<Events>();
    const calls: string[] = [];
    const late = (n: number) => calls.push(`late ${n}`);
    let removeSecond = () => {};
    const first = (n: number) => {
      calls.push(`first ${n}`);
      // Changes made by a listener apply from the next emit on.
      removeSecond();
      emitter.on('tick', late);
    };
    emitter.on('tick', first);
    emitter.on('tick', first);
    removeSecond = emitter.on('tick', (n) => calls.push(`second ${n}`));

    expect(emitter.emit('tick', 1)).toBe(true);
    expect(emitter.emit('tick', 2)).toBe(true);
    expect(calls).toEqual(['first 1', 'second 1', 'first 2', 'late 2']);
  });

  it('says whether a type has listeners, and tells a listener that throws without skipping the others', () => {
    const errors: unknown[] = [];
    const emitter = new Emitter<Events>((_, error) => errors.push(error));
    expect(emitter.has('tick')).toBe(false);
    expect(emitter.emit('tick', 1)).toBe(false);
    const seen: number[] = [];
    const remove = emitter.on('tick', () => {
      throw new Error('boom');
    });
    emitter.on('tick', (n) => seen.push(n));
    expect(emitter.has('tick')).toBe(true);
    emitter.emit('tick', 3);
    remove();
    remove();
    emitter.emit('tick', 4);
    expect(seen).toEqual([3, 4]);
    expect(errors).toEqual([new Error('boom')]);
  });
});
