// Claims held for a receiver that does not answer cost the heap what they hold, not an attempt
// each: at most four times `maxRequestsPerUrl` attempts of a source are under way, the rest wait to start.
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, expect, it } from 'vitest';
import { Deliverer } from '../../src/delivery/deliverer.js';
import { DeliveryEmitter } from '../../src/delivery/events.js';
import { JournalStore } from '../../src/delivery/journal/store.js';
import { Reporter } from '../../src/config/report.js';
import { tempDir, waitFor } from '../../../../test/helpers/collector.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';
import { recordingLogger } from '../observe/recording-logger.js';
import { delivery } from './store-contract.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const HELD = 5_000;
/**
 * Heap allowed per claim held while its receiver does not answer. The claim itself (its delivery,
 * with a message and webhook body of about 1 kB) took about 3.3 kB here; with an attempt started
 * for each, waiting for a slot, it took about 7.3 kB.
 */
const BOUND = 4_500;

const closing: (() => Promise<void>)[] = [];
let temp: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
  temp?.remove();
});

function heapUsed(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

it(`holds ${HELD.toLocaleString('en-US')} claims for a receiver that never answers in under ${BOUND} bytes of heap each, and delivers another source's messages meanwhile`, async () => {
  temp = tempDir();
  // Takes each request and never answers it.
  const silent = await startLoopback(() => undefined);
  const healthy = await startLoopback();
  closing.push(() => silent.close(), () => healthy.close());
  const store = new JournalStore(path.join(temp.dir, 'data'));
  await store.open();
  closing.push(() => store.close());
  const deliverer = new Deliverer({
    sources: new Map([
      ['down', { name: 'down', writeKey: 'wk1', webhooks: { webhooks: [{ url: silent.url }] } }],
      ['up', { name: 'up', writeKey: 'wk2', webhooks: { webhooks: [{ url: healthy.url }] } }],
    ]),
    delivery: { maxRequestsPerUrl: 4, timeout: 600_000 },
    queue: { lease: 600_000, pollInterval: 600_000, maxInFlight: 100_000 },
    store,
    events: new DeliveryEmitter(),
    report: new Reporter(recordingLogger()),
  });
  closing.push(() => deliverer.close());
  deliverer.start();
  await waitFor(() => deliverer.inFlight === 0, 'the deliverer to start');

  const before = heapUsed();
  const down = Array.from({ length: HELD }, (_, i) => ({ ...delivery(`d${i}`, Date.now(), { pad: 'x'.repeat(600) }), source: 'down' }));
  deliverer.take(await store.accept(down, { claim: HELD, lease: 600_000 }));
  await waitFor(() => silent.requests.length === 4, 'the silent receiver\'s four requests');
  const perHeld = (heapUsed() - before) / HELD;
  console.log(`heap per claim held for a silent receiver: ${Math.round(perHeld)} bytes`);
  expect(deliverer.inFlight).toBe(HELD);
  expect(perHeld).toBeLessThan(BOUND);

  // The silent receiver's source holds none of the other's slots.
  const up = Array.from({ length: 20 }, (_, i) => ({ ...delivery(`u${i}`, Date.now()), source: 'up' }));
  deliverer.take(await store.accept(up, { claim: 20, lease: 600_000 }));
  await waitFor(() => healthy.requests.length === 20, 'the healthy receiver\'s 20 deliveries');
  expect(silent.requests).toHaveLength(4);
});
