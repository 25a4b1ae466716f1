// `GET /metrics` of a real `serve` process, judged by promtool and read with a parser of the text
// format: values that move with traffic, the backlog with the receiver down and then drained, for
// the journal and PostgreSQL alike. Skips without promtool (and PostgreSQL); fails so under CI=true.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { basic, postJson, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';
import { expectValidExposition, PROMTOOL_SKIP, scrape } from '../../../../test/helpers/metrics.js';
import { POSTGRES_SKIP, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { sequence, status, useReceivers } from '../../../../test/helpers/receiver.js';

const cluster = useThrowawayCluster();
const temp = tempDir();
const receiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

const track = (event: string) => ({ type: 'track', userId: 'u1', event, properties: {} });
const poll = { timeout: 10_000, interval: 50 };

/** The stores a collector can run on: flags for `serve`, or why it is skipped here. */
const STORES: [name: string, flags: () => Promise<string[]>, skip: string | undefined][] = [
  ['the journal', async () => ['--data-dir', `${temp.dir}/${Math.random().toString(36).slice(2)}`], undefined],
  ['PostgreSQL', async () => ['--store', await cluster().createDatabase()], POSTGRES_SKIP],
];

describe.skipIf(PROMTOOL_SKIP !== undefined)(`GET /metrics${PROMTOOL_SKIP ? ` skipped: ${PROMTOOL_SKIP}` : ''}`, () => {
  it.for(STORES)('with %s: counts acceptances, refusals, requests and deliveries, and shows the backlog while the receiver is down, then drained', async ([name, flags, skip], ctx) => {
    if (skip !== undefined) ctx.skip(skip);
    let answer = 503;
    const hooks = await receiver((request, res, n) => status(answer)(request, res, n));
    // A query string is the receiver's secret: it must show nowhere.
    const url = `${hooks.url}?token=QUERY_SECRET_91`;
    const file = writeConfig(temp.dir, {
      sources: [{ name: 'web', writeKey: 'wk_metrics', destinations: { Webhooks: { webhooks: [{ url }] } } }],
      delivery: { minRetryDelay: 20, maxRetryDelay: 50, breakerThreshold: 2, retryWindow: 600_000 },
    }, `${name}.json`);
    const collector = await startCollector(['--config', file, '--port', '0', ...(await flags())]);
    const shown = hooks.url;

    const before = await scrape(collector.url);
    expectValidExposition(before.text);
    // prom-client's totals of the active handles, requests and resources, named as gauges.
    for (const name of ['handles', 'requests', 'resources']) expect(before.text).toMatch(new RegExp(`^# TYPE nodejs_active_${name}_all gauge$`, 'm'));
    expect(before.value('nodejs_active_handles_all')).toBeGreaterThan(0);
    expect(before.value('batched_analytics_messages_accepted_total')).toBe(0);
    expect(before.value('batched_analytics_backlog_deliveries')).toBe(0);
    expect(before.value('batched_analytics_backlog_oldest_age_seconds')).toBe(0);
    expect(before.value('batched_analytics_delivery_retry_window_seconds')).toBe(600);
    // The process's default metrics are there too.
    expect(before.value('process_cpu_seconds_total')).toBeGreaterThan(0);

    const auth = { authorization: basic('wk_metrics') };
    expect((await postJson(`${collector.url}/v1/batch`, { batch: [track('a'), track('b'), track('c')] }, auth)).status).toBe(200);
    expect((await postJson(`${collector.url}/v1/track`, track('d'), { authorization: basic('nobody') })).status).toBe(401);
    expect((await postJson(`${collector.url}/v1/track`, { type: 'track', event: 'no user' }, auth)).status).toBe(400);

    // Down: every attempt fails, retries are scheduled, the breaker opens, nothing leaves the backlog.
    await expect
      .poll(async () => {
        const now = await scrape(collector.url);
        return [now.value('batched_analytics_webhook_breaker_open', { source: 'web', url: shown }), now.value('batched_analytics_delivery_retries_total', { source: 'web' }) >= 3];
      }, poll)
      .toEqual([1, true]);
    const down = await scrape(collector.url);
    expectValidExposition(down.text);
    expect(down.text).not.toContain('QUERY_SECRET_91');
    expect(down.value('batched_analytics_messages_accepted_total', { source: 'web' })).toBe(3);
    expect(down.value('batched_analytics_requests_refused_total', { source: '', reason: 'ERR_UNAUTHORIZED' })).toBe(1);
    expect(down.value('batched_analytics_requests_refused_total', { source: 'web', reason: 'ERR_VALIDATION' })).toBe(1);
    expect(down.value('batched_analytics_backlog_deliveries')).toBe(3);
    expect(down.value('batched_analytics_backlog_oldest_age_seconds')).toBeGreaterThan(0);
    expect(down.value('batched_analytics_delivery_retries_total', { source: 'web' })).toBeGreaterThanOrEqual(3);
    expect(down.value('batched_analytics_webhook_requests_total', { source: 'web', url: shown, status_class: '5xx' })).toBeGreaterThanOrEqual(2);
    expect(down.value('batched_analytics_webhook_request_duration_seconds_count', { source: 'web', url: shown })).toBe(
      down.value('batched_analytics_webhook_requests_total', { source: 'web', url: shown }),
    );
    expect(down.value('batched_analytics_deliveries_total')).toBe(0);

    // Up again: the backlog drains, each delivery counted once, and the breaker closes.
    answer = 200;
    await expect.poll(async () => (await scrape(collector.url)).value('batched_analytics_deliveries_total', { source: 'web', outcome: 'delivered' }), poll).toBe(3);
    const up = await scrape(collector.url);
    expectValidExposition(up.text);
    expect(up.value('batched_analytics_backlog_deliveries')).toBe(0);
    expect(up.value('batched_analytics_backlog_oldest_age_seconds')).toBe(0);
    expect(up.value('batched_analytics_deliveries_in_flight')).toBe(0);
    expect(up.value('batched_analytics_webhook_requests_total', { source: 'web', url: shown, status_class: '2xx' })).toBe(3);
    expect(up.value('batched_analytics_webhook_breaker_open', { source: 'web', url: shown })).toBe(0);
    expect(up.value('batched_analytics_deliveries_total', { outcome: 'failed' })).toBe(0);
  });

  it('counts a delivery retried then refused as failed, and has every metric documented with its type and labels', async () => {
    // Once unavailable, then refused for good: a retry, then given up.
    const hooks = await receiver(sequence(503, 400));
    const file = writeConfig(temp.dir, { sources: [{ name: 'app', writeKey: 'wk_app', destinations: { Webhooks: { webhooks: [{ url: hooks.url, filter: { types: ['track'] } }] } } }], delivery: { minRetryDelay: 20, maxRetryDelay: 50 } }, 'refused.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/refused`]);
    const x = { ...track('x'), messageId: 'm-x' };
    expect((await postJson(`${collector.url}/v1/track`, x, { authorization: basic('wk_app') })).status).toBe(200);
    // A client sending it again: answered alike, forwarded nowhere, counted apart.
    expect((await postJson(`${collector.url}/v1/track`, x, { authorization: basic('wk_app') })).status).toBe(200);
    expect((await postJson(`${collector.url}/v1/track`, track('y'), { authorization: basic('nobody') })).status).toBe(401);
    // One the URL's filter does not take: accepted, forwarded nowhere, counted apart.
    expect((await postJson(`${collector.url}/v1/identify`, { type: 'identify', userId: 'u1', messageId: 'm-z' }, { authorization: basic('wk_app') })).status).toBe(200);
    await expect.poll(async () => (await scrape(collector.url)).value('batched_analytics_deliveries_total', { source: 'app', outcome: 'failed' }), poll).toBe(1);
    const after = await scrape(collector.url);
    expect(after.value('batched_analytics_webhook_requests_total', { source: 'app', status_class: '4xx' })).toBe(1);
    expect(after.value('batched_analytics_webhook_requests_total', { source: 'app', status_class: '5xx' })).toBe(1);
    expect(after.value('batched_analytics_delivery_retries_total', { source: 'app' })).toBe(1);
    expect(after.value('batched_analytics_messages_deduplicated_total', { source: 'app' })).toBe(1);
    expect(after.value('batched_analytics_messages_accepted_total', { source: 'app' })).toBe(2);
    expect(after.value('batched_analytics_messages_filtered_total', { source: 'app' })).toBe(1);

    // docs/operations.md's table names every metric of ours, with its type and labels.
    const documented = [...readFileSync(new URL('../../../../docs/operations.md', import.meta.url), 'utf8').matchAll(/^\| `(batched_analytics_\w+)` \| (\w+) \|([^|]*)\|/gm)].map(
      ([, name, type, labels]) => [name, type, [...labels!.matchAll(/`(\w+)`/g)].map(([, label]) => label).sort()],
    );
    const exported = [...after.text.matchAll(/^# TYPE (batched_analytics_\w+) (\w+)$/gm)].map(([, name, type]) => {
      const labels = new Set(after.samples.filter((sample) => [name, `${name}_bucket`, `${name}_sum`, `${name}_count`].includes(sample.name)).flatMap((sample) => Object.keys(sample.labels)));
      labels.delete('le');
      return [name, type, [...labels].sort()];
    });
    const byName = (rows: unknown[][]) => rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(byName(documented)).toEqual(byName(exported));
  });
});
