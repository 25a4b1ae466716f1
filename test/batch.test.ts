import { expect, it } from 'vitest';
import { batchBody, ENVELOPE_BYTES, type Entry, MessageStore, takeBatch } from '../src/batch.js';
import { Queue } from '../src/queue.js';

function queueOf(sizes: number[]): Queue<Entry> {
  const store = new MessageStore();
  const queue = new Queue<Entry>();
  sizes.forEach((size, i) => {
    const json = JSON.stringify({ i, pad: 'x'.repeat(Math.max(0, size - 20)) });
    queue.push(store.add(json, Buffer.byteLength(json), undefined, 0));
  });
  return queue;
}

const jsonOf = (entry: Entry) => entry.chunk.toString('utf8', entry.offset, entry.offset + entry.bytes);

it('takes at most maxCount messages from the head, in order', () => {
  const queue = queueOf([30, 30, 30]);
  const { entries } = takeBatch(queue, 2);
  expect(entries.map((e) => JSON.parse(jsonOf(e)).i)).toEqual([0, 1]);
  expect(queue.length).toBe(1);
});

it('stops before the body would exceed 500,000 bytes, and reports its exact size', () => {
  const queue = queueOf(Array.from({ length: 20 }, () => 32_000));
  const { entries, bytes } = takeBatch(queue, 100);
  const body = batchBody(entries, bytes, new Date());
  expect(entries).toHaveLength(15);
  expect(body.length).toBe(bytes);
  expect(bytes).toBeLessThanOrEqual(500_000);
  expect(bytes + 32_001).toBeGreaterThan(500_000);
});

it('builds a body that parses back to the messages and a sentAt', () => {
  const queue = queueOf([40, 50]);
  const { entries, bytes } = takeBatch(queue, 10);
  const sentAt = new Date(Date.UTC(2025, 4, 6, 7, 8, 9, 10));
  const body = JSON.parse(batchBody(entries, bytes, sentAt).toString());
  expect(body).toEqual({ batch: entries.map((e) => JSON.parse(jsonOf(e))), sentAt: '2025-05-06T07:08:09.010Z' });
  expect(ENVELOPE_BYTES).toBe(batchBody([], ENVELOPE_BYTES, sentAt).length);
});

it('keeps every message byte-exact, multi-byte UTF-8 included, across store chunks', () => {
  const store = new MessageStore();
  const queue = new Queue<Entry>();
  const messages = Array.from({ length: 12 }, (_, i) => ({ i, text: `é€😀${i}`.repeat(3_000) }));
  for (const message of messages) {
    const json = JSON.stringify(message);
    queue.push(store.add(json, Buffer.byteLength(json), undefined, 0));
  }
  const { entries, bytes } = takeBatch(queue, 100);
  expect(new Set(entries.map((e) => e.chunk)).size).toBeGreaterThan(1);
  const body = batchBody(entries, bytes, new Date());
  expect(body.length).toBe(bytes);
  expect(JSON.parse(body.toString()).batch).toEqual(messages);
});

it('the queue keeps order across many pushes and shifts', () => {
  const queue = new Queue<number>();
  let next = 0;
  for (let i = 0; i < 5_000; i++) {
    queue.push(i);
    if (i % 3 === 0) expect(queue.shift()).toBe(next++);
  }
  expect(queue.length).toBe(5_000 - next);
  expect(queue.drain()[0]).toBe(next);
  expect(queue.length).toBe(0);
});
