import { afterEach, describe, expect, it } from 'vitest';
import { Analytics, type DropEvent } from '../../src/index.js';
import { countIds, type Sink, startSink } from '../../../../test/helpers/sink.js';

let sink: Sink | undefined;
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

/** Observes a promise without awaiting it. */
function watch(promise: Promise<unknown>): { settled: boolean } {
  const state = { settled: false };
  void promise.then(() => {
    state.settled = true;
  });
  return state;
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('Analytics#ready()', () => {
  it('keeps a producer loop within maxQueueSize against a slow endpoint, dropping nothing', async () => {
    sink = await startSink({ delay: 2 });
    const analytics = new Analytics('KEY', { endpoint: sink.url, maxQueueSize: 50, flushAt: 10, maxInFlight: 2 });
    const drops: DropEvent[] = [];
    analytics.on('drop', (event) => drops.push(event));
    let calls = 0;
    let settled = 0;
    let peakHeld = 0;

    for (let i = 0; i < 1_000; i++) {
      await analytics.ready();
      analytics.track({ userId: `u${i}`, event: 'Imported', messageId: `m${i}` }, () => {
        settled += 1;
      });
      calls += 1;
      peakHeld = Math.max(peakHeld, calls - settled);
    }
    const summary = await analytics.close();

    // The bound was reached (the endpoint really was the bottleneck) and never exceeded.
    expect(peakHeld).toBe(50);
    expect(drops).toEqual([]);
    expect(summary).toEqual({ delivered: 1_000, failed: 0, dropped: 0 });
    const ids = countIds(sink.messages);
    expect(ids.size).toBe(1_000);
    expect([...ids.values()].every((count) => count === 1)).toBe(true);
    expect(sink.peakInFlight()).toBeLessThanOrEqual(2);
  });

  it('is what prevents drops: the same loop without it overflows the queue', async () => {
    sink = await startSink({ delay: 2 });
    const analytics = new Analytics('KEY', { endpoint: sink.url, maxQueueSize: 50, flushAt: 10, maxInFlight: 2 });
    for (let i = 0; i < 1_000; i++) analytics.track({ userId: `u${i}`, event: 'Imported' });
    const summary = await analytics.close();

    expect(summary.dropped).toBe(950);
    expect(sink.messages).toHaveLength(50);
  });

  it.each([
    ['delivered', 200],
    ['failed', 400],
  ])('waits while the queue is full and resolves once a batch has %s', async (_, status) => {
    sink = await startSink({ status: () => status });
    sink.hold();
    const analytics = new Analytics('KEY', { endpoint: sink.url, maxQueueSize: 4, flushAt: 2, maxInFlight: 1, maxRetries: 0 });
    const outcomes: (string | undefined)[] = [];
    for (let i = 0; i < 4; i++) analytics.track({ userId: 'u', event: 'E' }, (error) => outcomes.push(error?.code));
    await sink.until(() => sink!.requests() === 1);

    const room = watch(analytics.ready());
    await turn();
    expect(room.settled).toBe(false);

    sink.release();
    await analytics.ready();
    expect(outcomes).toEqual(status === 200 ? [undefined, undefined] : ['ERR_HTTP', 'ERR_HTTP']);
    analytics.track({ userId: 'u', event: 'E' });
    expect(await analytics.close()).toMatchObject({ dropped: 0 });
  });

  it('lets a waiting producer go at close() and resolves at once afterwards', async () => {
    sink = await startSink();
    sink.hold();
    const analytics = new Analytics('KEY', { endpoint: sink.url, maxQueueSize: 2, flushAt: 2 });
    analytics.track({ userId: 'u', event: 'E' });
    analytics.track({ userId: 'u', event: 'E' });
    await sink.until(() => sink!.requests() === 1);
    const room = watch(analytics.ready());

    const closing = analytics.close();
    await turn();
    expect(room.settled).toBe(true);
    const again = watch(analytics.ready());
    await turn();
    expect(again.settled).toBe(true);

    sink.release();
    expect(await closing).toEqual({ delivered: 2, failed: 0, dropped: 0 });
  });
});
