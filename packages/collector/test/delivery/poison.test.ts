// A few messages a receiver can never take must not hold back the others to its URL: the real
// `serve` process, a loopback receiver answering 503 to three chosen messages and 200 to the rest.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { basic, postJson, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../test/helpers/loopback.js';

const POISON = ['poison-0', 'poison-1', 'poison-2'];

let temp: ReturnType<typeof tempDir>;
let receiver: WebhookReceiver;

beforeEach(async () => {
  temp = tempDir();
  receiver = await startWebhookReceiver((messageId) => POISON.includes(messageId));
});
afterEach(async () => {
  await stopAll();
  await receiver.close();
  temp.remove();
});

const track = (messageId: string) => ({ type: 'track', userId: 'u1', event: 'Ordered', messageId });
const poisonAttempts = () => POISON.reduce((sum, id) => sum + (receiver.attempts.get(id) ?? 0), 0);

// 5 (the default): the three retried open the breaker only if one message's failures count more
// than once. 2: they open it, and its probes must then go to the messages that can succeed.
it.each([{ breakerThreshold: undefined }, { breakerThreshold: 2 }])(
  'delivers 200 messages sent after 3 that always get 503 within 3 s, and keeps retrying the 3 (breakerThreshold $breakerThreshold)',
  async ({ breakerThreshold }) => {
    const config = writeConfig(temp.dir, {
      sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } }],
      delivery: { minRetryDelay: 150, maxRetryDelay: 400, breakerThreshold },
    });
    const collector = await startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/data`]);
    const send = async (messageIds: string[]) => {
      const res = await postJson(`${collector.url}/v1/batch`, { batch: messageIds.map(track) }, { authorization: basic('wk_web') });
      expect(res.status).toBe(200);
    };

    await send(POISON);
    // Six failures in a row, past either threshold.
    await waitFor(() => poisonAttempts() >= 6, 'six attempts of the three', 10_000);
    const healthy = Array.from({ length: 200 }, (_, n) => `ok-${n}`);
    const sent = Date.now();
    await send(healthy.slice(0, 100));
    await send(healthy.slice(100));

    await waitFor(() => healthy.every((id) => receiver.delivered.has(id)), 'the 200 healthy messages', 3_000);
    expect(Math.max(...healthy.map((id) => receiver.delivered.get(id)!)) - sent).toBeLessThan(3_000);
    // Not given up: the three are still attempted, at their own backoff.
    const before = poisonAttempts();
    await waitFor(() => poisonAttempts() >= before + 6, 'more attempts of the three', 5_000);
    expect(POISON.some((id) => receiver.delivered.has(id))).toBe(false);
  },
  30_000,
);
