// A backlog in bounded memory: the journal keeps where each pending delivery lies on disk and its
// schedule, not the delivery, which is read back when it is claimed.
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, expect, it } from 'vitest';
import { JournalStore } from '../../../src/delivery/journal/store.js';
import { tempDir } from '../../../../../test/helpers/collector.js';
import { delivery } from '../store-contract.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const PENDING = 20_000;
/** Heap allowed per pending delivery: what it holds (an id, a source, its place on disk and schedule, a due-queue node) takes about half. */
const BOUND = 500;

let temp: ReturnType<typeof tempDir> | undefined;
afterEach(() => temp?.remove());

/** Accepts PENDING deliveries of about 1 kB each into a journal, and closes it. */
async function backlog(dir: string): Promise<void> {
  const store = new JournalStore(dir);
  await store.open();
  for (let i = 0; i < PENDING; i += 1_000) {
    await store.accept(Array.from({ length: 1_000 }, (_, j) => delivery(`p${i + j}`, 1_000, { pad: 'x'.repeat(600) })));
  }
  await store.close();
}

function heapUsed(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

it(`holds ${PENDING.toLocaleString('en-US')} pending deliveries in under ${BOUND} bytes of heap each, and hands out every one`, async () => {
  temp = tempDir();
  const dir = path.join(temp.dir, 'data');
  await backlog(dir);
  const before = heapUsed();
  const store = new JournalStore(dir);
  expect(await store.open()).toEqual({ pending: PENDING });
  const perPending = (heapUsed() - before) / PENDING;
  console.log(`journal heap per pending delivery: ${Math.round(perPending)} bytes`);
  expect(perPending).toBeLessThan(BOUND);

  let handed = 0;
  for (let claimed = await store.claim(500, 60_000); claimed.length > 0; claimed = await store.claim(500, 60_000)) {
    expect(claimed[0]!.delivery.message).toMatchObject({ properties: { pad: 'x'.repeat(600) } });
    handed += claimed.length;
  }
  expect(handed).toBe(PENDING);
  await store.close();
});
