// Once a receiver is back after an outage, what waited for it is delivered at once, not each
// message after its own backoff: the real `serve` process and a loopback receiver that answers 503
// while it is "down".
import { afterEach, beforeEach, expect, it } from 'vitest';
import { basic, postJson, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../test/helpers/loopback.js';

let temp: ReturnType<typeof tempDir>;
let receiver: WebhookReceiver;
let down = true;

beforeEach(async () => {
  temp = tempDir();
  down = true;
  receiver = await startWebhookReceiver(() => down);
});
afterEach(async () => {
  await stopAll();
  await receiver.close();
  temp.remove();
});

const track = (n: number) => ({ type: 'track', userId: `u${n % 97}`, event: 'Ordered', messageId: `m-${n}` });

it('delivers 2,000 messages that backed off during an outage within 8 s of the receiver coming back, not after their backoffs', async () => {
  const config = writeConfig(temp.dir, {
    sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } }],
    // Backoffs of 5 s doubling to a minute: after the outage, most messages wait 10 to 20 s more.
    delivery: { minRetryDelay: 5_000, maxRetryDelay: 60_000 },
  });
  const collector = await startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/data`]);
  const total = 2_000;
  for (let b = 0; b < total / 100; b++) {
    const batch = Array.from({ length: 100 }, (_, i) => track(b * 100 + i));
    expect((await postJson(`${collector.url}/v1/batch`, { batch }, { authorization: basic('wk_web') })).status).toBe(200);
  }
  // Long enough for the breaker to have probed and failed once, and every message to have backed off.
  await new Promise((resolve) => setTimeout(resolve, 8_000));
  expect(receiver.delivered.size).toBe(0);

  down = false;
  const back = Date.now();
  await waitFor(() => receiver.delivered.size === total, `the ${total} messages`, 8_000);
  const times = [...receiver.delivered.values()];
  const first = Math.min(...times) - back;
  const drained = Math.max(...times) - back;
  expect(drained, `first delivery ${first} ms after the receiver came back, all ${total} after ${drained} ms`).toBeLessThan(8_000);
}, 40_000);
