// Filters per webhook URL, through the real CLI and real loopback receivers: each URL gets only the
// messages its filter takes; a message none takes is settled at once, shown as not forwarded and
// counted; a reload changes the filters for the messages that come after it. Filters by event hold
// for deliveries read back from the store too, journal and PostgreSQL (skipped without it; fails so
// under CI=true).
import { writeFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { basic, postJson, startCollector, stopAll, tempDir, waitFor, watchEvents, writeConfig } from '../../../../test/helpers/collector.js';
import { drained } from '../../../../test/helpers/metrics.js';
import { serveStores, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { type Receiver, useReceivers } from '../../../../test/helpers/receiver.js';

const cluster = useThrowawayCluster();
const temp = tempDir();
const receiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

const auth = { authorization: basic('wk_web') };
const order = (messageId: string) => ({ type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 9 }, messageId });
const signUp = (messageId: string) => ({ type: 'track', userId: 'u1', event: 'Signed Up', messageId });
const identify = (messageId: string) => ({ type: 'identify', userId: 'u1', traits: { plan: 'pro' }, messageId });
const page = (messageId: string) => ({ type: 'page', userId: 'u1', name: 'Home', messageId });
const messageIds = (hook: Receiver) => hook.requests.map((request) => JSON.parse(request.raw.toString('utf8')).messageId as string);

function config(orders: { url: string; filter: unknown }, identities: { url: string; filter: unknown }, extra: Record<string, unknown> = {}) {
  return {
    sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [orders, identities] } } }],
    delivery: { minRetryDelay: 20, maxRetryDelay: 50 },
    ...extra,
  };
}

/** The stores a collector can run on: flags for `serve`, or why it is skipped here. */
const STORES = serveStores(temp.dir, cluster);


describe('serve: a filter per webhook URL', () => {
  it('sends each URL only what its filter takes, settles a message none takes at once, and shows both on the page', async () => {
    const orders = await receiver();
    const identities = await receiver();
    const file = writeConfig(temp.dir, config({ url: orders.url, filter: { events: ['Order Completed'] } }, { url: identities.url, filter: { types: ['identify'] } }), 'filters.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/filters`]);
    const events = await watchEvents(collector.url);
    try {
      const batch = [order('o-1'), signUp('s-1'), identify('i-1'), page('p-1'), order('o-2')];
      expect((await postJson(`${collector.url}/v1/batch`, { batch }, auth)).status).toBe(200);
      const metrics = await drained(collector.url, 3);
      expect(messageIds(orders).sort()).toEqual(['o-1', 'o-2']);
      expect(messageIds(identities)).toEqual(['i-1']);
      expect(metrics.value('batched_analytics_deliveries_total', { outcome: 'delivered' })).toBe(3);
      expect(metrics.value('batched_analytics_messages_filtered_total', { source: 'web' })).toBe(2);
      expect(metrics.value('batched_analytics_messages_accepted_total', { source: 'web' })).toBe(5);

      const view = (messageId: string) => [...events.latest.values()].find((event) => event.message.messageId === messageId)!;
      await waitFor(() => view('i-1')?.status === 'delivered' && view('o-2')?.status === 'delivered', 'the deliveries shown as delivered');
      for (const messageId of ['s-1', 'p-1']) {
        expect(view(messageId)).toMatchObject({
          status: 'not forwarded',
          routes: [{ destination: 'Webhooks', forwarded: false, reason: "no webhook URL's filter takes it" }],
          webhooks: [],
        });
      }
      expect(view('i-1').webhooks).toEqual([
        expect.objectContaining({ url: orders.url, status: 'filtered', attempts: 0, filter: 'events: Order Completed' }),
        expect.objectContaining({ url: identities.url, status: 'delivered', attempts: 1, filter: 'types: identify' }),
      ]);
      expect(view('o-1').webhooks.map(({ status }) => status)).toEqual(['delivered', 'filtered']);

      // The history the page pages back through says the same.
      const history = (await (await fetch(`${collector.url}/history?limit=10`)).json()) as { events: { message: { messageId: string }; status: string; routes: { reason?: string }[] }[] };
      const signUpKept = history.events.find((event) => event.message.messageId === 's-1')!;
      expect(signUpKept).toMatchObject({ status: 'not forwarded', routes: [{ reason: "no webhook URL's filter takes it" }] });
    } finally {
      events.close();
    }
  });

  it('applies the filters of a reloaded config to the messages that come after it', async () => {
    const orders = await receiver();
    const identities = await receiver();
    const file = writeConfig(temp.dir, config({ url: orders.url, filter: { events: ['Order Completed'] } }, { url: identities.url, filter: { types: ['identify'] } }), 'reload.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/reload`]);
    expect((await postJson(`${collector.url}/v1/batch`, { batch: [order('o-1'), page('p-1'), identify('i-1')] }, auth)).status).toBe(200);
    await drained(collector.url, 2);

    writeFileSync(file, JSON.stringify(config({ url: orders.url, filter: { types: ['page', 'identify'] } }, { url: identities.url, filter: { types: ['identify'] } })));
    collector.child.kill('SIGHUP');
    await waitFor(() => collector.stderr().includes('config reloaded'), 'the reload');
    expect((await postJson(`${collector.url}/v1/batch`, { batch: [order('o-2'), page('p-2'), identify('i-2')] }, auth)).status).toBe(200);
    const metrics = await drained(collector.url, 4);

    // An attempt asks every URL that takes the message at once: i-2 reaches both.
    expect(messageIds(orders).sort()).toEqual(['i-2', 'o-1', 'p-2']);
    expect(messageIds(identities).sort()).toEqual(['i-1', 'i-2']);
    expect(metrics.value('batched_analytics_messages_filtered_total', { source: 'web' })).toBe(2);
  });

  it.for(STORES)('with %s: filters by event the deliveries it claims from the store, not only those it claimed at acceptance', async ([name, flags, skip], ctx) => {
    if (skip !== undefined) ctx.skip(skip);
    const orders = await receiver();
    const identities = await receiver();
    // One delivery held at a time: the acceptance claims the first, the others wait in the store.
    const settings = config({ url: orders.url, filter: { events: ['Order Completed'] } }, { url: identities.url, filter: { types: ['identify'] } }, { queue: { maxInFlight: 1, pollInterval: 50 } });
    const collector = await startCollector(['--config', writeConfig(temp.dir, settings, `claimed-${name}.json`), '--port', '0', ...(await flags())]);
    const batch = [order('o-1'), identify('i-1'), order('o-2'), order('o-3'), identify('i-2')];
    expect((await postJson(`${collector.url}/v1/batch`, { batch }, auth)).status).toBe(200);
    const metrics = await drained(collector.url, 5);
    expect(metrics.value('batched_analytics_deliveries_total', { outcome: 'delivered' })).toBe(5);
    expect(messageIds(orders).sort()).toEqual(['o-1', 'o-2', 'o-3']);
    expect(messageIds(identities).sort()).toEqual(['i-1', 'i-2']);
  });
});
