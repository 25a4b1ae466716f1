// The Deliverer with a disabled webhook URL, against a real journal store and a real receiver: what
// waits for the URL is kept, past its retry window, and sent once the URL is enabled.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Deliverer } from '../../src/delivery/deliverer.js';
import { DeliveryEmitter } from '../../src/delivery/events.js';
import { JournalStore } from '../../src/delivery/journal/store.js';
import { tempDir, waitFor } from '../../../../test/helpers/collector.js';
import { startLoopback } from '../../../../test/helpers/loopback.js';
import { delivery } from './store-contract.js';
import { Reporter } from '../../src/config/report.js';
import { recordingLogger } from '../observe/recording-logger.js';

const temp = tempDir();
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});
afterAll(() => temp.remove());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Deliverer: a disabled URL', () => {
  it('keeps what waits for it past its retry window, without giving it up, and delivers it once the URL is enabled', async () => {
    let healthy = false;
    const receiver = await startLoopback((_, res) => res.writeHead(healthy ? 200 : 500).end('{}'));
    closing.push(() => receiver.close());
    const store = new JournalStore(`${temp.dir}/kept`);
    await store.open();
    closing.push(() => store.close());
    const events = new DeliveryEmitter();
    const seen = { kept: new Set<string>(), settled: [] as { id: string; outcome: string }[], disabled: 0 };
    events.on('kept', ({ delivery: kept }) => seen.kept.add(kept.id));
    events.on('settled', ({ delivery: settled, outcome }) => seen.settled.push({ id: settled.id, outcome }));
    events.on('urlDisabled', () => seen.disabled++);
    const deliverer = new Deliverer({
      sources: new Map([['web', { name: 'web', writeKey: 'wk', webhooks: { webhooks: [{ url: receiver.url }] } }]]),
      delivery: { retryWindow: 1_500, minRetryDelay: 10, maxRetryDelay: 30, disableAfter: 150 },
      queue: { lease: 30_000, pollInterval: 50, maxInFlight: 100 },
      report: new Reporter(recordingLogger()),
      store,
      events,
    });
    closing.push(() => deliverer.close());
    deliverer.start();

    const acceptedAt = Date.now();
    await store.accept([delivery('d0', acceptedAt)]);
    await waitFor(() => seen.kept.has('d0'), 'd0 kept once its URL is disabled');
    expect(seen.disabled).toBe(1);
    // Accepted while the URL is disabled: kept at once, never sent.
    const requests = receiver.requests.length;
    await store.accept([delivery('d1', Date.now())]);
    await waitFor(() => seen.kept.has('d1'), 'd1 kept');
    // Well past d0's retry window (1.5 s from its acceptance): nothing given up, nothing sent.
    await sleep(Math.max(0, acceptedAt + 2_000 - Date.now()));
    expect(seen.settled).toEqual([]);
    expect(receiver.requests.length).toBe(requests);
    expect((await store.backlog()).pending).toBe(2);

    healthy = true;
    expect(await deliverer.enable('web', receiver.url)).toMatchObject({ outcome: 'enabled', state: { source: 'web', url: receiver.url } });
    await waitFor(() => seen.settled.length === 2, 'both delivered');
    expect(seen.settled.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'd0', outcome: 'delivered' },
      { id: 'd1', outcome: 'delivered' },
    ]);
    expect(receiver.requests.length).toBe(requests + 2);
    expect(await deliverer.enable('web', receiver.url)).toMatchObject({ outcome: 'not disabled' });
    expect(await deliverer.enable('web', 'https://elsewhere.example.com/')).toEqual({ outcome: 'unknown' });
  });
});
