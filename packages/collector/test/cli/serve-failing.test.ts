// Failing receivers through the real CLI and real loopback receivers: a URL all of whose attempts
// fail for `delivery.disableAfter` is disabled (no more requests; what waits for it is kept while
// the source's other URL gets everything), alerts arrive signed as Standard Webhooks, and enabling
// the URL delivers what was kept, once. The same survives a restart on the journal and a reload, and holds for
// two collectors on one PostgreSQL database (skipped without it; fails so under CI=true).
import { describe, expect, it } from 'vitest';
import { basic, type Collector, postJson, startCollector, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { scrape } from '../../../../test/helpers/metrics.js';
import { POSTGRES_SKIP } from '../../../../test/helpers/postgres.js';
import { ADMIN_AUTH, ADMIN_TOKEN, useServeSuite } from '../../../../test/helpers/serve-suite.js';
import { type ReceivedRequest, type Receiver } from '../../../../test/helpers/receiver.js';
import { newSecret, realVerifierAccepts } from '../../../../test/helpers/standard-webhooks.js';

const { cluster, temp, receiver } = useServeSuite();
const track = (messageId: string) => ({ type: 'track', userId: 'u1', event: 'Order Completed', messageId });
const bodyOf = (request: ReceivedRequest) => JSON.parse(request.raw.toString('utf8')) as Record<string, any>;
const messageIds = (requests: readonly ReceivedRequest[]) => requests.map((request) => bodyOf(request).messageId as string);
const alertsOf = (alerts: Receiver, type: string) => alerts.requests.map(bodyOf).filter((alert) => alert.type === type);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A receiver answering 500 until `heal()`, then 200. */
async function healingReceiver() {
  let healthy = false;
  const healedAt: number[] = [];
  const hook = await receiver((request, res) => {
    if (healthy && healedAt.length === 0) healedAt.push(hook.requests.indexOf(request));
    res.writeHead(healthy ? 200 : 500, { 'content-type': 'application/json' }).end('{}');
  });
  return {
    hook,
    heal: () => (healthy = true),
    /** The requests answered since it healed. */
    since: () => hook.requests.slice(healedAt[0] ?? hook.requests.length),
  };
}

function config(urls: { down: string; up: string; shop: string; alerts: string }, secret: string, extra: Record<string, unknown> = {}) {
  return {
    adminToken: ADMIN_TOKEN,
    sources: [
      { name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: urls.down }, { url: urls.up }] } } },
      { name: 'shop', writeKey: 'wk_shop', destinations: { Webhooks: { webhooks: [{ url: urls.shop }] } } },
    ],
    delivery: { minRetryDelay: 20, maxRetryDelay: 100, disableAfter: 1_500, failingAfter: 3 },
    alerts: { url: urls.alerts, secret },
    ...extra,
  };
}

/** Sends one message to each source every 100 ms for `ms`, numbered from `from`. */
async function sendFor(collectors: readonly Collector[], ms: number, from: number): Promise<number> {
  let n = from;
  for (const end = Date.now() + ms; Date.now() < end; n++) {
    const collector = collectors[n % collectors.length]!;
    expect((await postJson(`${collector.url}/v1/track`, track(`w-${n}`), { authorization: basic('wk_web') })).status).toBe(200);
    expect((await postJson(`${collector.url}/v1/track`, track(`s-${n}`), { authorization: basic('wk_shop') })).status).toBe(200);
    await sleep(100);
  }
  return n;
}

const STORES: [name: string, start: (args: string[]) => Promise<{ collectors: Collector[]; restart: () => Promise<Collector[]> }>, skip: string | undefined][] = [
  [
    'the journal, across a restart',
    async (args) => {
      const dir = ['--data-dir', `${temp.dir}/${Math.random().toString(36).slice(2)}`];
      const first = await startCollector([...args, ...dir]);
      return {
        collectors: [first],
        restart: async () => {
          await first.stop();
          return [await startCollector([...args, ...dir])];
        },
      };
    },
    undefined,
  ],
  [
    'two collectors on one PostgreSQL database',
    async (args) => {
      const store = ['--store', await cluster().createDatabase()];
      const collectors = [await startCollector([...args, ...store]), await startCollector([...args, ...store])];
      return { collectors, restart: async () => collectors };
    },
    POSTGRES_SKIP,
  ],
];

/** The URLs `collector` shows as disabled on `GET /webhooks`, as it last read their states. */
async function disabledShown(collector: Collector): Promise<string[]> {
  const state = (await (await fetch(`${collector.url}/webhooks`, { headers: ADMIN_AUTH })).json()) as { urls: { url: string; disabledAt?: number }[] };
  return state.urls.filter((url) => url.disabledAt !== undefined).map((url) => url.url);
}

describe('serve: a webhook URL that keeps failing', () => {
  for (const [name, start, skip] of STORES) {
    it.skipIf(skip !== undefined)(`is disabled and alerted about, the other URL gets everything, and enabling it delivers what was kept, once: ${name}${skip ? ` (skipped: ${skip})` : ''}`, async () => {
      const down = await receiver((_, res) => res.writeHead(500).end());
      const up = await receiver();
      const shop = await healingReceiver();
      const alerts = await receiver();
      const secret = newSecret();
      const urls = { down: down.url, up: up.url, shop: shop.hook.url, alerts: alerts.url };
      const name = `failing-${Math.random()}.json`;
      const file = writeConfig(temp.dir, config(urls, secret), name);
      const started = await start(['--config', file, '--port', '0']);
      let collectors = started.collectors;

      // Failing for longer than disableAfter: both failing URLs are disabled, each told once.
      let sent = await sendFor(collectors, 2_000, 0);
      await waitFor(() => alertsOf(alerts, 'endpoint.disabled').length === 2, 'endpoint.disabled for both failing URLs', 10_000);
      const disabled = alertsOf(alerts, 'endpoint.disabled');
      expect(disabled.map((alert) => alert.data.url).sort()).toEqual([down.url, shop.hook.url].sort());
      expect(disabled.find((alert) => alert.data.source === 'shop')).toMatchObject({ data: { source: 'shop', lastStatus: 500, messageId: expect.stringMatching(/^s-/) } });
      for (const request of alerts.requests) expect(realVerifierAccepts('standardwebhooks', [secret], request.raw, request.headers)).toBe(true);
      expect(new Set(alerts.requests.map((request) => request.headers['webhook-id'])).size).toBe(alerts.requests.length);
      // failingAfter (3) attempts in a row: told once per URL within the hour.
      expect(alertsOf(alerts, 'endpoint.failing').map((alert) => alert.data.url).sort()).toEqual([down.url, shop.hook.url].sort());
      // Counted by the process that raised them.
      const counted = await Promise.all(collectors.map(async (collector) => (await scrape(collector.url)).value('batched_analytics_alerts_total', { type: 'endpoint.disabled' })));
      expect(counted.reduce((sum, count) => sum + count, 0)).toBe(2);

      // Disabled: it gets nothing more, also after a restart and a reload that remakes the
      // destinations (new delivery options), while the other URL of the source gets everything.
      await sleep(300);
      collectors = await started.restart();
      const reloaded = config(urls, secret);
      writeConfig(temp.dir, { ...reloaded, delivery: { ...reloaded.delivery, timeout: 4_000 } }, name);
      for (const collector of collectors) {
        collector.child.kill('SIGHUP');
        await waitFor(() => collector.stderr().includes('config reloaded'), 'the reload');
      }
      // A collector learns what another disabled at its next poll (queue.pollInterval): from then on.
      for (const collector of collectors) {
        await expect.poll(async () => (await disabledShown(collector)).sort(), { timeout: 5_000 }).toEqual([down.url, shop.hook.url].sort());
      }
      const [downBefore, shopBefore] = [down.requests.length, shop.hook.requests.length];
      const kept = sent;
      sent = await sendFor(collectors, 1_000, sent);
      const webIds = Array.from({ length: sent }, (_, n) => `w-${n}`);
      await waitFor(() => new Set(messageIds(up.requests)).size === sent, 'every web message at the URL that answers', 10_000);
      expect(new Set(messageIds(up.requests))).toEqual(new Set(webIds));
      await sleep(500);
      expect(down.requests.length).toBe(downBefore);
      expect(shop.hook.requests.length).toBe(shopBefore);
      // Kept, not given up: nothing of the shop failed, and nothing alerted as exhausted.
      const metrics = await scrape(collectors[0]!.url);
      expect(metrics.value('batched_analytics_deliveries_total', { source: 'shop', outcome: 'failed' }) ?? 0).toBe(0);
      expect(metrics.value('batched_analytics_backlog_deliveries', {})).toBe(sent);
      expect(alertsOf(alerts, 'message.attempt.exhausted')).toEqual([]);

      // Enabling: refused without the admin token, a bad body names its field, an unknown URL is 404.
      const enable = (body: unknown, headers: Record<string, string> = ADMIN_AUTH) => postJson(`${collectors.at(-1)!.url}/v1/webhooks/enable`, body, headers);
      expect((await enable({ source: 'shop', url: shop.hook.url }, {})).status).toBe(401);
      expect(await enable({ source: 'shop' })).toMatchObject({ status: 400, body: { field: 'url' } });
      expect(await enable({ url: shop.hook.url })).toMatchObject({ status: 400, body: { field: 'source' } });
      expect((await enable({ source: 'shop', url: 'http://127.0.0.1:1/nowhere' })).status).toBe(404);
      expect((await enable({ source: 'nope', url: shop.hook.url })).status).toBe(404);

      shop.heal();
      expect(await enable({ source: 'shop', url: shop.hook.url })).toMatchObject({ status: 200, body: { source: 'shop', url: shop.hook.url, enabled: true, wasDisabled: true } });
      const shopIds = Array.from({ length: sent }, (_, n) => `s-${n}`);
      await waitFor(() => new Set(messageIds(shop.since())).size === sent, 'every kept shop message at the enabled URL', 15_000);
      await sleep(500);
      // Once each: what was kept (accepted both before and after it was disabled), nothing twice.
      expect(messageIds(shop.since()).sort()).toEqual([...shopIds].sort());
      expect(kept).toBeGreaterThan(0);
      await waitFor(() => alertsOf(alerts, 'endpoint.enabled').length === 1, 'endpoint.enabled');
      expect(alertsOf(alerts, 'endpoint.enabled')[0]).toMatchObject({ data: { source: 'shop', url: shop.hook.url, disabledAt: expect.any(String), enabledAt: expect.any(String) } });
      // The other one stays disabled.
      expect(down.requests.length).toBe(downBefore);
      // Every collector shows it enabled once it has read the URLs' states again (each poll).
      for (const collector of collectors) {
        await expect.poll(() => disabledShown(collector), { timeout: 5_000 }).toEqual([down.url]);
      }
    }, 60_000);
  }

  it('alerts message.attempt.exhausted when a delivery is given up, and an alert URL that fails never alerts about itself', async () => {
    const hook = await receiver((_, res) => res.writeHead(503).end());
    const alerts = await receiver((request, res) => res.writeHead(bodyOf(request).type === 'message.attempt.exhausted' ? 200 : 500).end());
    const secret = newSecret();
    const file = writeConfig(
      temp.dir,
      {
        sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: hook.url }] } } }],
        delivery: { minRetryDelay: 20, maxRetryDelay: 50, retryWindow: 400, failingAfter: 2 },
        alerts: { url: alerts.url, secret },
      },
      'exhausted.json',
    );
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/exhausted`]);
    expect((await postJson(`${collector.url}/v1/track`, track('x-1'), { authorization: basic('wk_web') })).status).toBe(200);
    await waitFor(() => alertsOf(alerts, 'message.attempt.exhausted').length === 1, 'message.attempt.exhausted', 10_000);
    const [exhausted] = alertsOf(alerts, 'message.attempt.exhausted');
    expect(exhausted).toMatchObject({
      type: 'message.attempt.exhausted',
      timestamp: expect.any(String),
      data: { source: 'web', url: hook.url, messageId: 'x-1', lastStatus: 503, attempts: expect.any(Number), receivedAt: expect.any(String) },
    });
    const request = alerts.requests.find((r) => bodyOf(r).type === 'message.attempt.exhausted')!;
    expect(realVerifierAccepts('standardwebhooks', [secret], request.raw, request.headers)).toBe(true);
    // The alert URL answered 500 to endpoint.failing until its own retry window ran out: no alert about it.
    await sleep(1_000);
    expect(alerts.requests.map(bodyOf).filter((alert) => alert.data.url === alerts.url)).toEqual([]);
    const metrics = await scrape(collector.url);
    expect(metrics.value('batched_analytics_alerts_total', { type: 'message.attempt.exhausted' })).toBe(1);
    expect(metrics.value('batched_analytics_alerts_total', { type: 'endpoint.failing' })).toBe(1);
  }, 30_000);

  it('retries a receiver that answers 3xx, records its status in each attempt, and never follows it', async () => {
    const elsewhere = await receiver();
    const moved = await receiver((_, res) => res.writeHead(moved.requests.length < 3 ? 307 : 200, { location: elsewhere.url }).end());
    const alerts = await receiver();
    const file = writeConfig(
      temp.dir,
      {
        adminToken: ADMIN_TOKEN,
        sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: moved.url }] } } }],
        delivery: { minRetryDelay: 20, maxRetryDelay: 50 },
        alerts: { url: alerts.url, secret: newSecret() },
      },
      'moved.json',
    );
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/moved`]);
    expect((await postJson(`${collector.url}/v1/track`, track('m-1'), { authorization: basic('wk_web') })).status).toBe(200);
    await waitFor(() => moved.requests.length === 3, 'the attempt after two redirects', 10_000);
    await expect.poll(async () => (await scrape(collector.url)).value('batched_analytics_deliveries_total', { source: 'web', outcome: 'delivered' }), { timeout: 5_000 }).toBe(1);

    const record = (await (await fetch(`${collector.url}/v1/messages/m-1`, { headers: ADMIN_AUTH })).json()) as { deliveries: unknown[] };
    expect(record.deliveries).toMatchObject([{ state: 'delivered', attempts: [{ attempt: 1, status: 307 }, { attempt: 2, status: 307 }, { attempt: 3, status: 200 }] }]);
    expect(elsewhere.requests).toEqual([]);
    expect(alertsOf(alerts, 'message.attempt.exhausted')).toEqual([]);
    expect(collector.stderr()).not.toContain('given up');
  }, 30_000);
});
