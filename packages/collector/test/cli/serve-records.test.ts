// Delivery records in the store: `GET /v1/messages/<messageId>` answers each delivery with its
// attempts after a restart, and a replay reaches any delivery the store holds, not only what the
// live page still keeps; `POST /v1/deliveries/recover`, after a receiver refused messages for a
// while (400: given up at once), sends exactly those again, once, even when called twice at once
// or on two collectors sharing a database. Real `serve` processes, on the journal and on
// PostgreSQL, a real receiver. (Who may look a message up beyond loopback: test/ingress/access.test.ts.)
import { describe, expect, it } from 'vitest';
import { basic, type Collector, oneWebhookConfig, postJson, startCollector, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { POSTGRES_SKIP } from '../../../../test/helpers/postgres.js';
import { ADMIN_AUTH, ADMIN_TOKEN, useServeSuite } from '../../../../test/helpers/serve-suite.js';
import { type Receiver, status } from '../../../../test/helpers/receiver.js';

const { cluster, temp, receiver } = useServeSuite();
const track = (n: number) => ({ type: 'track', userId: 'u1', event: 'Viewed', messageId: `m${n}`, properties: { n } });
const HISTORY = 200;

async function lookUp(collector: Collector, messageId: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${collector.url}/v1/messages/${encodeURIComponent(messageId)}`, { headers: ADMIN_AUTH });
  return { status: res.status, body: await res.json() };
}

/** Which messageIds a receiver got, in order. */
const received = (requests: { raw: Buffer }[]) => requests.map((request) => (JSON.parse(request.raw.toString('utf8')) as { messageId: string }).messageId);

function lookupsAcrossRestart(store: (dir: string) => Promise<Record<string, unknown>>) {
  return async () => {
    // The first request of m-flaky is refused, every other answered 200.
    const hooks = await receiver((request, res, n) => status(n === 0 ? 500 : 200)(request, res, n));
    const dir = `${temp.dir}/${Math.random().toString(36).slice(2)}`;
    const file = writeConfig(temp.dir, oneWebhookConfig(hooks.url, { adminToken: ADMIN_TOKEN, historyEvents: HISTORY, ...(await store(dir)) }), `${Math.random()}.json`);
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
    expect((await fetch(`${first.url}/events/${m0.id}`, { headers: ADMIN_AUTH })).status).toBe(404);
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
    const replayed = await postJson(`${second.url}/v1/deliveries/${m0.id}/replay`, {}, ADMIN_AUTH);
    expect(replayed.status).toBe(202);
    await waitFor(() => hooks.requests.length === 3 + HISTORY + 50, 'the replay', 10_000);
    const original = hooks.requests.find((request) => received([request])[0] === 'm0')!;
    expect(hooks.requests.at(-1)!.raw.equals(original.raw)).toBe(true);
    await expect.poll(async () => (await lookUp(second, 'm0')).body.deliveries.map((d: any) => [d.id, d.state]), { timeout: 5_000 }).toEqual([
      [m0.id, 'delivered'],
      [replayed.body.id, 'delivered'],
    ]);
    expect((await postJson(`${second.url}/v1/deliveries/not-a-delivery/replay`, {}, ADMIN_AUTH)).status).toBe(404);
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

const trackId = (messageId: string) => ({ type: 'track', userId: 'u1', event: 'Viewed', messageId });

/** How many requests of each messageId the receiver got. */
function counts(hooks: Receiver): Record<string, number> {
  const seen: Record<string, number> = {};
  for (const request of hooks.requests) {
    const { messageId } = JSON.parse(request.raw.toString('utf8')) as { messageId: string };
    seen[messageId] = (seen[messageId] ?? 0) + 1;
  }
  return seen;
}

const recover = (collector: Collector, body: unknown, headers: Record<string, string> = ADMIN_AUTH) => postJson(`${collector.url}/v1/deliveries/recover`, body, headers);

async function state(collector: Collector, messageId: string): Promise<string | undefined> {
  const res = await fetch(`${collector.url}/v1/messages/${messageId}`, { headers: ADMIN_AUTH });
  return res.status === 200 ? ((await res.json()) as { deliveries: { state: string }[] }).deliveries[0]?.state : undefined;
}

/**
 * Sends m1 (delivered), then m2..m4 while the receiver answers 400 (given up), then m5; returns
 * when the window of failures began. `send` picks the collector each message goes to.
 */
async function outage(hooks: Receiver, refusing: { on: boolean }, send: (n: number) => Collector): Promise<number> {
  const post = async (n: number) => expect((await postJson(`${send(n).url}/v1/track`, trackId(`m${n}`), { authorization: basic('wk_web') })).status).toBe(200);
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
    const file = writeConfig(temp.dir, oneWebhookConfig(hooks.url, { adminToken: ADMIN_TOKEN }), 'journal.json');
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
    const file = writeConfig(temp.dir, oneWebhookConfig(hooks.url, { adminToken: ADMIN_TOKEN, store: await cluster().createDatabase() }), 'cluster.json');
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
