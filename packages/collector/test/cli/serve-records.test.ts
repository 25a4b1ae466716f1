// Delivery records in the store: `GET /v1/messages/<messageId>` answers each delivery with its
// attempts after a restart, and a replay reaches any delivery the store holds, not only what the
// live page still keeps. Real `serve` processes, on the journal and on PostgreSQL. (Who may look
// a message up beyond loopback: test/ingress/access.test.ts.)
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { basic, type Collector, oneWebhookConfig, postJson, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { POSTGRES_SKIP, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { status, useReceivers } from '../../../../test/helpers/receiver.js';

const cluster = useThrowawayCluster();
const temp = tempDir();
const receiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

const ADMIN = 'admin-token-0123456789';
const auth = { authorization: `Bearer ${ADMIN}` };
const track = (n: number) => ({ type: 'track', userId: 'u1', event: 'Viewed', messageId: `m${n}`, properties: { n } });
const HISTORY = 200;

async function lookUp(collector: Collector, messageId: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${collector.url}/v1/messages/${encodeURIComponent(messageId)}`, { headers: auth });
  return { status: res.status, body: await res.json() };
}

/** Which messageIds a receiver got, in order. */
const received = (requests: { raw: Buffer }[]) => requests.map((request) => (JSON.parse(request.raw.toString('utf8')) as { messageId: string }).messageId);

function lookupsAcrossRestart(store: (dir: string) => Promise<Record<string, unknown>>) {
  return async () => {
    // The first request of m-flaky is refused, every other answered 200.
    const hooks = await receiver((request, res, n) => status(n === 0 ? 500 : 200)(request, res, n));
    const dir = `${temp.dir}/${Math.random().toString(36).slice(2)}`;
    const file = writeConfig(temp.dir, oneWebhookConfig(hooks.url, { adminToken: ADMIN, historyEvents: HISTORY, ...(await store(dir)) }), `${Math.random()}.json`);
    const start = () => startCollector(['--config', file, '--port', '0', '--data-dir', dir]);
    const first = await start();
    expect((await postJson(`${first.url}/v1/track`, { ...track(0), messageId: 'm-flaky' }, { authorization: basic('wk_web') })).status).toBe(200);
    await waitFor(() => hooks.requests.length === 2, 'the retry of m-flaky', 10_000);
    // More events than the live page keeps: m0 leaves its history.
    for (let from = 0; from < HISTORY + 50; from += 50) {
      const batch = Array.from({ length: 50 }, (_, i) => track(from + i));
      expect((await postJson(`${first.url}/v1/batch`, { batch }, { authorization: basic('wk_web') })).status).toBe(200);
    }
    await waitFor(() => hooks.requests.length === 2 + HISTORY + 50, 'every delivery', 20_000);
    const before = await lookUp(first, 'm0');
    expect(before.status).toBe(200);
    const [m0] = before.body.deliveries;
    expect((await fetch(`${first.url}/events/${m0.id}`, { headers: auth })).status).toBe(404);
    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const second = await start();
    const flaky = await lookUp(second, 'm-flaky');
    expect(flaky.status).toBe(200);
    expect(flaky.body).toMatchObject({ messageId: 'm-flaky', deliveries: [{ source: 'web', state: 'delivered' }] });
    const attempts = flaky.body.deliveries[0].attempts;
    expect(attempts.map((attempt: any) => [attempt.attempt, attempt.url, attempt.status])).toEqual([
      [1, hooks.url, 500],
      [2, hooks.url, 200],
    ]);
    expect(attempts[0].error).toMatch(/500/);
    for (const attempt of attempts) {
      expect(Date.parse(attempt.at)).toBeGreaterThan(Date.now() - 60_000);
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
    }
    expect(await lookUp(second, 'm0')).toEqual(before);
    expect((await lookUp(second, 'never-sent')).status).toBe(404);

    // m0 is older than anything the page keeps: the store sends it again all the same, same bytes.
    const replayed = await postJson(`${second.url}/v1/deliveries/${m0.id}/replay`, {}, auth);
    expect(replayed.status).toBe(202);
    await waitFor(() => hooks.requests.length === 3 + HISTORY + 50, 'the replay', 10_000);
    const original = hooks.requests.find((request) => received([request])[0] === 'm0')!;
    expect(hooks.requests.at(-1)!.raw.equals(original.raw)).toBe(true);
    await expect.poll(async () => (await lookUp(second, 'm0')).body.deliveries.map((d: any) => [d.id, d.state]), { timeout: 5_000 }).toEqual([
      [m0.id, 'delivered'],
      [replayed.body.id, 'delivered'],
    ]);
    expect((await postJson(`${second.url}/v1/deliveries/not-a-delivery/replay`, {}, auth)).status).toBe(404);
  };
}

describe('delivery records', () => {
  it('journal: GET /v1/messages/<id> answers every attempt after a restart, and a delivery the page no longer keeps is sent again', lookupsAcrossRestart(async () => ({})), 60_000);

  it.skipIf(POSTGRES_SKIP !== undefined)(
    `PostgreSQL: the same${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`,
    lookupsAcrossRestart(async () => ({ store: await cluster().createDatabase() })),
    60_000,
  );
});
