// What a receiver of the collector sees, through the real CLI: Standard Webhooks signatures that
// the spec's own libraries accept on every attempt, across a restart that rotates the secrets, and
// a URL's rateLimit measured at the receiver.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Analytics } from 'batched-analytics';
import { verifySignature, verifyStandardWebhook } from 'batched-analytics/webhooks';
import { startCollector, stopAll, tempDir, waitFor, watchEvents, writeConfig } from '../../../../test/helpers/collector.js';
import { startClockedReceiver } from '../../../../test/helpers/clocked-receiver.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../../../../test/helpers/loopback.js';
import { newSecret, realVerifierAccepts, type VerifierName } from '../../../../test/helpers/standard-webhooks.js';

const VERIFIERS: VerifierName[] = ['standardwebhooks', 'svix'];
let temp: ReturnType<typeof tempDir>;
beforeEach(() => {
  temp = tempDir();
});
afterEach(async () => {
  await stopAll();
  temp.remove();
});

function serve(webhooks: Record<string, unknown>, delivery: Record<string, number> = {}) {
  const config = writeConfig(temp.dir, { sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: webhooks } }], delivery });
  return startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/data`]);
}

const acceptedBy = (secrets: string[]) => (request: LoopbackRequest) =>
  VERIFIERS.every((name) => realVerifierAccepts(name, secrets, request.body, request.headers));

describe('Standard Webhooks from the collector', () => {
  let receiver: Loopback;
  let healthy = false;
  beforeEach(async () => {
    healthy = false;
    receiver = await startLoopback((_, res) => void res.writeHead(healthy ? 200 : 503).end());
  });
  afterEach(() => receiver.close());

  it('every attempt verifies with the real libraries, across a restart that rotates both secrets; the page shows no secret', async () => {
    const [a, b] = [newSecret(), newSecret()];
    const retries = { minRetryDelay: 20, maxRetryDelay: 40 };
    const first = await serve({ webhooks: [{ url: receiver.url }], sharedSecret: 'shared-a', standardWebhooks: { secrets: [a] } }, retries);
    const analytics = new Analytics('wk_web', { endpoint: first.url });
    for (let seq = 0; seq < 10; seq++) analytics.track({ userId: 'u1', event: 'Signed', properties: { seq } });
    expect(await analytics.close()).toMatchObject({ delivered: 10, failed: 0 });
    await waitFor(() => receiver.requests.length >= 25, 'first attempts and retries');

    // What the live page shows of a request: the exact id; no secret, of either scheme.
    const events = await watchEvents(first.url);
    await waitFor(() => events.latest.size >= 10, 'the events on the page');
    const [event] = events.latest.values();
    events.close();
    const detail = await (await fetch(`${first.url}/events/${event!.id}`)).json();
    const sentId = JSON.parse(detail.body).messageId;
    expect(detail.requests[0].headers['webhook-id']).toBe(sentId);
    expect(detail.standardWebhooks.how).toContain('HMAC-SHA256');
    for (const secret of [a, a.slice('whsec_'.length), 'shared-a']) expect(JSON.stringify(detail)).not.toContain(secret);

    await first.stop('SIGKILL');
    const before = receiver.requests.length;
    healthy = true;
    // Rotated while retries were pending: the new secret first, the previous one kept for the overlap.
    await serve({ webhooks: [{ url: receiver.url }], sharedSecret: ['shared-b', 'shared-a'], standardWebhooks: { secrets: [b, a] } }, retries);
    await waitFor(() => new Set(receiver.requests.slice(before).map((r) => r.headers['webhook-id'])).size === 10, 'a retry of each message after the restart', 10_000);

    const [old, rotated] = [receiver.requests.slice(0, before), receiver.requests.slice(before)];
    // A receiver that still knows only A loses nothing; one that already moved to B accepts what the rotated sender sends.
    expect(receiver.requests.every(acceptedBy([a]))).toBe(true);
    expect(rotated.every(acceptedBy([b]))).toBe(true);
    expect(old.some(acceptedBy([b]))).toBe(false);
    for (const request of receiver.requests) {
      expect(await verifyStandardWebhook(request.body, request.headers, [a, b])).toBe(true);
      expect(verifySignature(request.body, request.headers['x-signature'], ['shared-a', 'shared-b'])).toBe(true);
      // The same id and bytes on every attempt, before and after the restart.
      expect(request.headers['webhook-id']).toBe(JSON.parse(request.body).messageId);
    }
    expect(rotated.every((request) => verifySignature(request.body, request.headers['x-signature'], 'shared-b'))).toBe(true);
    const bodies = new Map<string, Set<string>>();
    for (const { body, headers } of receiver.requests) bodies.set(headers['webhook-id'] as string, (bodies.get(headers['webhook-id'] as string) ?? new Set()).add(body));
    expect([...bodies.values()].every((set) => set.size === 1)).toBe(true);
  }, 20_000);
});

describe('rateLimit in the collector', () => {
  it('a URL limited to 20/s sees at most 20 requests in any one-second window (±1), and every message', async () => {
    const receiver = await startClockedReceiver();
    try {
      const collector = await serve({ webhooks: [{ url: receiver.url, rateLimit: 20 }] });
      const analytics = new Analytics('wk_web', { endpoint: collector.url, flushAt: 1 });
      /** Waits until the receiver has `count` requests, and returns their arrival times. */
      const arrived = async (count: number) => {
        let arrivals: number[] = [];
        const deadline = Date.now() + 8_000;
        while ((arrivals = await receiver.arrivals()).length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        return arrivals;
      };
      // A first request, so that the burst finds a connection: a fresh process's first request
      // takes tens of ms to connect, and the receiver would see the next ones, on time, close behind.
      analytics.track({ userId: 'u1', event: 'Warm-up' });
      await analytics.flush();
      await arrived(1);
      for (let seq = 0; seq < 60; seq++) analytics.track({ userId: 'u1', event: 'Paced', properties: { seq } });
      expect(await analytics.close()).toMatchObject({ delivered: 61, failed: 0 });
      // 60 requests at 20/s take about 3 s: the collector accepted them all at once.
      const arrivals = await arrived(61);
      expect(arrivals).toHaveLength(61);
      const sorted = arrivals.sort((x, y) => x - y);
      let most = 0;
      for (let start = 0, end = 0; start < sorted.length; start += 1) {
        while (end < sorted.length && sorted[end]! < sorted[start]! + 1_000) end += 1;
        most = Math.max(most, end - start);
      }
      expect(most).toBeLessThanOrEqual(21);
      expect(sorted.at(-1)! - sorted[1]!).toBeGreaterThanOrEqual(59 * 50 - 50);
    } finally {
      await receiver.close();
    }
  }, 20_000);
});
