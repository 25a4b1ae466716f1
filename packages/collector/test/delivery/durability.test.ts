// What the collector accepted survives a hard kill: SIGKILL the real CLI mid-retry, start it again
// on the same data dir, and every message still arrives.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Analytics } from 'batched-analytics';
import { basic, postJson, startCollector, stopAll, tempDir, waitFor, watchEvents, writeConfig } from '../../../../test/helpers/collector.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';

let temp: ReturnType<typeof tempDir>;
let receiver: Loopback;
let healthy = false;
/** What the receiver answered 2xx, in order. */
let accepted: Record<string, any>[] = [];

beforeEach(async () => {
  temp = tempDir();
  healthy = false;
  accepted = [];
  receiver = await startLoopback((req, res) => {
    if (!healthy) return void res.writeHead(503).end();
    accepted.push(JSON.parse(req.body));
    res.writeHead(200).end();
  });
});
afterEach(async () => {
  await stopAll();
  await receiver.close();
  temp.remove();
});

function serve(delivery: Record<string, number>) {
  const config = writeConfig(temp.dir, {
    sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } }],
    delivery,
  });
  return startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/data`]);
}

it('delivers after a restart what was accepted before a SIGKILL, each message once, and keeps audience state', async () => {
  const first = await serve({ minRetryDelay: 20, maxRetryDelay: 40 });
  const analytics = new Analytics('wk_web', { endpoint: first.url, flushAt: 10 });
  for (let seq = 0; seq < 25; seq++) analytics.track({ userId: 'durable', event: 'Numbered', properties: { seq } });
  expect(await analytics.close()).toEqual({ delivered: 25, failed: 0, dropped: 0 });
  const audience = await postJson(`${first.url}/v1/audiences`, { name: 'Survivors', userIds: ['s1', 's2'] }, { authorization: basic('wk_web') });
  expect(audience.body).toMatchObject({ joined: 2 });

  // Mid-retry: every message has been tried and some already retried against the 503s.
  await waitFor(() => receiver.requests.length >= 27 + 5, 'first attempts and some retries');
  expect(await first.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
  expect(accepted).toEqual([]);

  healthy = true;
  const second = await serve({ minRetryDelay: 20, maxRetryDelay: 40 });
  await waitFor(() => accepted.length >= 27, 'the 27 messages after the restart');
  await waitFor(() => second.stderr().includes('27 undelivered message(s) pending in the journal'), 'the resume report');
  const seqs = accepted.filter((b) => b.event === 'Numbered').map((b) => b.properties.seq as number);
  expect(seqs.sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, seq) => seq));
  expect(accepted.filter((b) => b.type === 'identify').map((b) => [b.userId, b.traits.survivors]).sort()).toEqual([['s1', true], ['s2', true]]);
  // Every attempt of a message, before and after the kill, sent the same bytes: a receiver can
  // de-duplicate by messageId and the signature does not change.
  const bodies = new Map<string, Set<string>>();
  for (const { body } of receiver.requests) bodies.set(JSON.parse(body).messageId, (bodies.get(JSON.parse(body).messageId) ?? new Set()).add(body));
  expect(bodies.size).toBe(27);
  expect([...bodies.values()].every((set) => set.size === 1)).toBe(true);
  expect(receiver.requests.length).toBeGreaterThan(27);

  // The audience's state survived too: the same membership is no change.
  const again = await postJson(`${second.url}/v1/audiences`, { name: 'Survivors', userIds: ['s2', 's1'] }, { authorization: basic('wk_web') });
  expect(again.body).toMatchObject({ joined: 0, left: 0 });

  // Settled deliveries are not replayed by a third start.
  expect(await second.stop('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
  const third = await serve({});
  const report = await watchEvents(third.url);
  await waitFor(() => third.stderr().includes('data dir:'), 'the start report');
  expect(third.stderr()).not.toContain('resumed');
  expect(report.latest.size).toBe(0);
  report.close();
  expect(accepted).toHaveLength(27);
});

it("keeps each message's retry window, counted from acceptance, across a restart", async () => {
  const window = { retryWindow: 300, minRetryDelay: 50, maxRetryDelay: 50 };
  const first = await serve(window);
  const acceptedAt = Date.now();
  expect((await postJson(`${first.url}/v1/track`, { userId: 'u', event: 'Late' }, { authorization: basic('wk_web') })).status).toBe(200);
  await waitFor(() => receiver.requests.length >= 1, 'the first attempt');
  await first.stop('SIGKILL');

  // Restart once the 300 ms window has passed: the message gets one last attempt, not a new window.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, acceptedAt + 400 - Date.now())));
  const second = await serve(window);
  const events = await watchEvents(second.url);
  await waitFor(() => [...events.latest.values()].some((e) => e.webhooks[0]?.status === 'failed'), 'the resumed delivery to fail');
  const [view] = [...events.latest.values()];
  expect(view).toMatchObject({ origin: 'replay', message: { event: 'Late' }, webhooks: [{ status: 'failed', attempts: 1, httpStatus: 503 }] });
  events.close();
});
