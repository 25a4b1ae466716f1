// `POST /v1/deliveries/recover`: after a receiver refused messages for a while (400: given up at
// once), one call sends exactly those again, once, even when called twice at once or on two
// collectors sharing a database. Real `serve` processes, a real receiver.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { basic, type Collector, oneWebhookConfig, postJson, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { POSTGRES_SKIP, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { type Receiver, status, useReceivers } from '../../../../test/helpers/receiver.js';

const cluster = useThrowawayCluster();
const temp = tempDir();
const receiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

const ADMIN = 'admin-token-0123456789';
const auth = { authorization: `Bearer ${ADMIN}` };
const track = (messageId: string) => ({ type: 'track', userId: 'u1', event: 'Viewed', messageId });

/** How many requests of each messageId the receiver got. */
function counts(hooks: Receiver): Record<string, number> {
  const seen: Record<string, number> = {};
  for (const request of hooks.requests) {
    const { messageId } = JSON.parse(request.raw.toString('utf8')) as { messageId: string };
    seen[messageId] = (seen[messageId] ?? 0) + 1;
  }
  return seen;
}

const recover = (collector: Collector, body: unknown, headers: Record<string, string> = auth) => postJson(`${collector.url}/v1/deliveries/recover`, body, headers);

async function state(collector: Collector, messageId: string): Promise<string | undefined> {
  const res = await fetch(`${collector.url}/v1/messages/${messageId}`, { headers: auth });
  return res.status === 200 ? ((await res.json()) as { deliveries: { state: string }[] }).deliveries[0]?.state : undefined;
}

/**
 * Sends m1 (delivered), then m2..m4 while the receiver answers 400 (given up), then m5; returns
 * when the window of failures began. `send` picks the collector each message goes to.
 */
async function outage(hooks: Receiver, refusing: { on: boolean }, send: (n: number) => Collector): Promise<number> {
  const post = async (n: number) => expect((await postJson(`${send(n).url}/v1/track`, track(`m${n}`), { authorization: basic('wk_web') })).status).toBe(200);
  await post(1);
  await waitFor(() => hooks.requests.length === 1, 'm1');
  refusing.on = true;
  const since = Date.now();
  for (const n of [2, 3, 4]) await post(n);
  await waitFor(() => hooks.requests.length === 4, 'the refused ones');
  for (const n of [2, 3, 4]) await expect.poll(() => state(send(n), `m${n}`), { timeout: 5_000 }).toBe('failed');
  refusing.on = false;
  await post(5);
  await waitFor(() => hooks.requests.length === 5, 'm5');
  return since;
}

describe('POST /v1/deliveries/recover', () => {
  it('sends exactly what was given up within the window, once, even when asked twice at once; checks its body', async () => {
    const refusing = { on: false };
    const hooks = await receiver((request, res, n) => status(refusing.on ? 400 : 200)(request, res, n));
    const file = writeConfig(temp.dir, oneWebhookConfig(hooks.url, { adminToken: ADMIN }), 'journal.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/journal`]);
    const since = await outage(hooks, refusing, () => collector);

    const [one, two] = await Promise.all([recover(collector, { source: 'web', since: new Date(since).toISOString() }), recover(collector, { source: 'web', since })]);
    expect([one.status, two.status]).toEqual([202, 202]);
    expect(one.body.recovered + two.body.recovered).toBe(3);
    await waitFor(() => hooks.requests.length === 8, 'the recovered ones');
    expect((await recover(collector, { source: 'web', since: 0 })).body).toEqual({ recovered: 0 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(counts(hooks)).toEqual({ m1: 1, m2: 2, m3: 2, m4: 2, m5: 1 });

    expect(await recover(collector, { source: 'nope', since })).toMatchObject({ status: 404, body: { code: 'ERR_NOT_FOUND' } });
    expect(await recover(collector, { source: 'web', since: 'yesterday' })).toMatchObject({ status: 400, body: { field: 'since' } });
    expect(await recover(collector, { source: 'web', since, until: since - 1 })).toMatchObject({ status: 400, body: { field: 'until' } });
    expect(await recover(collector, { source: 'web', since, url: 'https://elsewhere.example/hook' })).toMatchObject({ status: 400, body: { field: 'url' } });
    expect((await recover(collector, { source: 'web', since }, { authorization: basic('wk_web') })).status).toBe(401);
  }, 60_000);

  it.skipIf(POSTGRES_SKIP !== undefined)(`two collectors on one PostgreSQL, both asked at once: each given-up message once${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`, async () => {
    const refusing = { on: false };
    const hooks = await receiver((request, res, n) => status(refusing.on ? 400 : 200)(request, res, n));
    const file = writeConfig(temp.dir, oneWebhookConfig(hooks.url, { adminToken: ADMIN, store: await cluster().createDatabase() }), 'cluster.json');
    const collectors = await Promise.all([1, 2].map(() => startCollector(['--config', file, '--port', '0'])));
    const since = await outage(hooks, refusing, (n) => collectors[n % 2]!);

    const answers = await Promise.all(collectors.map((collector) => recover(collector, { source: 'web', since, url: hooks.url })));
    expect(answers.map((answer) => answer.status)).toEqual([202, 202]);
    expect(answers[0]!.body.recovered + answers[1]!.body.recovered).toBe(3);
    await waitFor(() => hooks.requests.length === 8, 'the recovered ones', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(counts(hooks)).toEqual({ m1: 1, m2: 2, m3: 2, m4: 2, m5: 1 });
  }, 60_000);
});
