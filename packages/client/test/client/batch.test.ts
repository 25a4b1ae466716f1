import { expect, it } from 'vitest';
import { ENVELOPE_BYTES, type Entry, MessageStore, takeBatch, withSentAt } from '../../src/client/batch.js';
import { Queue } from '../../src/core/queue.js';

function queueOf(messages: unknown[]): { queue: Queue<Entry>; store: MessageStore } {
  const store = new MessageStore();
  const queue = new Queue<Entry>();
  for (const message of messages) {
    const json = JSON.stringify(message);
    const bytes = Buffer.byteLength(json);
    store.add(json, bytes);
    queue.push({ bytes, callback: undefined, epoch: 0 });
  }
  return { queue, store };
}

const padded = (size: number) => (_: unknown, i: number) => ({ i, pad: 'x'.repeat(Math.max(0, size - 20)) });
const sentAt = new Date(Date.UTC(2025, 4, 6, 7, 8, 9, 10));

it('takes at most maxCount messages from the head, in order', () => {
  const { queue, store } = queueOf(Array.from({ length: 3 }, padded(30)));
  const { entries, body } = takeBatch(queue, store, 2, sentAt);
  expect(entries).toHaveLength(2);
  expect(JSON.parse(Buffer.from(body).toString()).batch.map((m: { i: number }) => m.i)).toEqual([0, 1]);
  expect(queue.length).toBe(1);
  expect(JSON.parse(takeBatch(queue, store, 2, sentAt).body.toString()).batch.map((m: { i: number }) => m.i)).toEqual([2]);
});

it('stops before the body would exceed 500,000 bytes', () => {
  const { queue, store } = queueOf(Array.from({ length: 20 }, padded(32_000)));
  const { entries, body } = takeBatch(queue, store, 100, sentAt);
  expect(entries).toHaveLength(15);
  expect(body.length).toBeLessThanOrEqual(500_000);
  expect(body.length + 32_001).toBeGreaterThan(500_000);
});

it('builds a body that parses back to the messages and its sentAt', () => {
  const messages = Array.from({ length: 2 }, padded(45));
  const { queue, store } = queueOf(messages);
  const { body } = takeBatch(queue, store, 10, sentAt);
  expect(JSON.parse(body.toString())).toEqual({ batch: messages, sentAt: '2025-05-06T07:08:09.010Z' });
  expect(takeBatch(new Queue<Entry>(), new MessageStore(), 10, sentAt).body.length).toBe(ENVELOPE_BYTES - 1);
});

it('keeps every message byte-exact, multi-byte UTF-8 included, across store chunks', () => {
  // About 30,000 bytes each: four fill a chunk, so a batch of twelve spans several.
  const messages = Array.from({ length: 12 }, (_, i) => ({ i, text: `é€😀${i}`.repeat(3_000) }));
  const { queue, store } = queueOf(messages);
  const first = takeBatch(queue, store, 5, sentAt);
  const second = takeBatch(queue, store, 100, sentAt);
  expect(JSON.parse(first.body.toString()).batch).toEqual(messages.slice(0, 5));
  expect(JSON.parse(second.body.toString()).batch).toEqual(messages.slice(5));
});

it('keeps every body intact while later bodies are cut from chunks already read', () => {
  const messages = Array.from({ length: 1_000 }, (_, i) => ({ i, text: (i % 3 === 0 ? 'ü' : 'u').repeat(500) }));
  const { queue, store } = queueOf(messages);
  const bodies: Uint8Array[] = [];
  while (queue.length > 0) bodies.push(takeBatch(queue, store, 20, sentAt).body);
  expect(bodies.flatMap((body) => JSON.parse(Buffer.from(body).toString()).batch)).toEqual(messages);
});

it('reads on from where the last batch stopped after the store is cleared and refilled', () => {
  const { queue, store } = queueOf(Array.from({ length: 3 }, padded(30)));
  takeBatch(queue, store, 1, sentAt);
  queue.drain();
  store.clear();
  const json = JSON.stringify({ after: 'clear' });
  store.add(json, json.length);
  queue.push({ bytes: json.length, callback: undefined, epoch: 0 });
  expect(JSON.parse(takeBatch(queue, store, 10, sentAt).body.toString()).batch).toEqual([{ after: 'clear' }]);
});

it('renews sentAt in a copy, leaving the body it was given intact', () => {
  const messages = [{ list: [1], sentAt: 'a message may hold the same key' }];
  const { queue, store } = queueOf(messages);
  const { body } = takeBatch(queue, store, 10, sentAt);
  const original = body.toString();
  const retried = withSentAt(body, new Date(Date.UTC(2026, 0, 1)));
  expect(JSON.parse(retried.toString())).toEqual({ batch: messages, sentAt: '2026-01-01T00:00:00.000Z' });
  expect(body.toString()).toBe(original);
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
