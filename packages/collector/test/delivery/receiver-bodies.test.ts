// Receivers that answer huge or endless bodies, against a real `batched-analytics serve` process:
// it reads a bounded part of each answer, counts it as its status, and its memory stays put.
import { afterEach, describe, expect, it } from 'vitest';
import { basic, postJson, rss, startCollector, stopAll, tempDir, waitFor, watchEvents, writeConfig } from '../../../../test/helpers/collector.js';
import { type Flood, type FloodReply, startFlood } from '../../../../test/helpers/flood.js';

let temp: ReturnType<typeof tempDir> | undefined;
let flood: Flood | undefined;
afterEach(async () => {
  await stopAll();
  await flood?.close();
  temp?.remove();
  flood = undefined;
  temp = undefined;
});

const MB = 1024 * 1024;
/**
 * How much the collector may grow while it retries: a hundred requests with small error bodies
 * grow it by about 50 MB; reading each 200 MB body whole, by gigabytes.
 */
const GROWTH = 150 * MB;
/** Messages in flight to the receiver at once. */
const MESSAGES = 20;

/** A collector forwarding to `reply`, retrying at once, and `MESSAGES` messages sent to it. */
async function forwardTo(reply: FloodReply) {
  flood = await startFlood(reply);
  temp = tempDir();
  const config = writeConfig(temp.dir, {
    sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: flood.url }] } } }],
    delivery: { timeout: 10_000, minRetryDelay: 10, maxRetryDelay: 50, breakerThreshold: 1_000 },
  });
  const collector = await startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/data`]);
  const events = await watchEvents(collector.url);
  const idle = rss(collector.child.pid!);
  const batch = Array.from({ length: MESSAGES }, (_, n) => ({ type: 'track', userId: 'u', event: `Flooded ${n}` }));
  expect((await postJson(`${collector.url}/v1/batch`, { batch }, { authorization: basic('wk_web') })).status).toBe(200);
  return { collector, events, idle };
}

describe('a receiver answering a huge or endless body', () => {
  it.each([
    ['a 200 MB body', 200 * MB],
    ['an endless chunked body', 'endless'],
  ] as const)('answering 500 with %s: recorded as 500 with the body start, retried, and the memory stays bounded', async (_name, bytes) => {
    const { collector, events, idle } = await forwardTo({ status: 500, start: 'receiver exploded: ', bytes });
    let peak = idle;
    await waitFor(
      () => {
        peak = Math.max(peak, rss(collector.child.pid!));
        // Fail at once rather than wait for the retries of a collector that reads every body whole.
        if (peak > idle + GROWTH) throw new Error(`the collector grew from ${idle / MB} MB to ${peak / MB} MB`);
        return flood!.requests() >= 100;
      },
      '100 requests to the receiver',
      15_000,
    );
    expect(peak - idle).toBeLessThan(GROWTH);
    const shown = [...events.latest.values()];
    expect(shown).toHaveLength(MESSAGES);
    for (const event of shown) {
      expect(event.webhooks[0]).toMatchObject({ status: 'retrying', httpStatus: 500 });
      expect(event.webhooks[0]!.note).toMatch(/^Request failed with status 500: receiver exploded: x+$/);
    }
    events.close();
  });

  it('answering 200 with an endless body: delivered', async () => {
    const { events } = await forwardTo({ status: 200, start: '{"ok":true', bytes: 'endless' });
    await waitFor(() => events.latest.size === MESSAGES && [...events.latest.values()].every((event) => event.status === 'delivered'), `${MESSAGES} deliveries`);
    expect(flood!.requests()).toBe(MESSAGES);
    events.close();
  });
});
