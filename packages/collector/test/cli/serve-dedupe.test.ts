// De-duplication on `messageId`, through the real CLI: in a batch, across requests and routes, per
// source, on the live page and in /metrics, across kill -9 (journal), with `dedupe.window` 0, and on
// two collectors sharing a PostgreSQL database (skipped without it; fails so under CI=true).
import { readdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { basic, type Collector, postJson, startCollector, stopAll, tempDir, waitFor, watchEvents, writeConfig } from '../../../../test/helpers/collector.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';
import { expectValidExposition, PROMTOOL_SKIP, scrape } from '../../../../test/helpers/metrics.js';
import { POSTGRES_SKIP, useThrowawayCluster } from '../../../../test/helpers/postgres.js';

const cluster = useThrowawayCluster();
const temp = tempDir();
let web: Loopback;
let app: Loopback;
beforeAll(async () => {
  [web, app] = await Promise.all([startLoopback(), startLoopback()]);
});
afterEach(stopAll);
afterAll(async () => {
  await Promise.all([web.close(), app.close()]);
  temp.remove();
});

const config = (extra: Record<string, unknown> = {}) => ({
  sources: [
    { name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: web.url }] } } },
    { name: 'app', writeKey: 'wk_app', destinations: { Webhooks: { webhooks: [{ url: app.url }] } } },
    { name: 'quiet', writeKey: 'wk_quiet' },
  ],
  delivery: { minRetryDelay: 20, maxRetryDelay: 50 },
  ...extra,
});

/** A run's own ids: every test sends ids no other test sends to the same receivers. */
let run = 0;
const ids = () => {
  run += 1;
  return (name: string) => `dedupe-${run}-${name}`;
};
const track = (messageId: string) => ({ type: 'track', userId: 'u1', event: 'Ordered', messageId });
const as = (writeKey: string) => ({ authorization: basic(writeKey) });
/** Webhook requests `hook` received for `messageId`. */
const received = (hook: Loopback, messageId: string) => hook.requests.filter((request) => (JSON.parse(request.body) as { messageId: string }).messageId === messageId).length;

/** Sends `marker` last and waits until it is delivered: what was sent before it had its chance to be too. */
async function settleWith(collector: Collector, hook: Loopback, writeKey: string, marker: string): Promise<void> {
  expect((await postJson(`${collector.url}/v1/track`, track(marker), as(writeKey))).status).toBe(200);
  await waitFor(() => received(hook, marker) === 1, `${marker} delivered`);
}

describe('serve: de-duplication on messageId (journal)', () => {
  it('forwards a messageId once per source, in a batch, across batches and routes; answers every repeat 200, counts it and shows it as a duplicate', async () => {
    const id = ids();
    const collector = await startCollector(['--config', writeConfig(temp.dir, config(), 'dedupe.json'), '--port', '0', '--data-dir', `${temp.dir}/data-1`]);
    const events = await watchEvents(collector.url);
    try {
      const batch = await postJson(`${collector.url}/v1/batch`, { batch: [track(id('a')), track(id('b')), track(id('a'))] }, as('wk_web'));
      expect(batch).toMatchObject({ status: 200, body: { success: true } });
      expect((await postJson(`${collector.url}/v1/track`, track(id('b')), as('wk_web'))).status).toBe(200);
      expect((await postJson(`${collector.url}/v1/batch`, { batch: [track(id('a'))] }, as('wk_web'))).status).toBe(200);
      // Per source: the same id in another source is another message.
      expect((await postJson(`${collector.url}/v1/track`, track(id('a')), as('wk_app'))).status).toBe(200);
      // A source without a destination remembers its ids too.
      expect((await postJson(`${collector.url}/v1/batch`, { batch: [track(id('q')), track(id('q'))] }, as('wk_quiet'))).status).toBe(200);
      await settleWith(collector, web, 'wk_web', id('end'));
      await waitFor(() => received(app, id('a')) === 1, 'app received a');

      expect([received(web, id('a')), received(web, id('b')), received(app, id('a'))]).toEqual([1, 1, 1]);
      await waitFor(() => events.all.filter((view) => view.message.messageId === id('a')).length >= 4, 'the page shows every arrival of a');
      const arrivalsOfA = [...events.latest.values()].filter((view) => view.source === 'web' && view.message.messageId === id('a'));
      expect(arrivalsOfA).toHaveLength(3);
      const [first, ...repeats] = arrivalsOfA;
      expect(first).toMatchObject({ status: 'delivered' });
      for (const repeat of repeats) {
        expect(repeat).toMatchObject({ status: 'not forwarded', webhooks: [], duplicateOf: { firstAcceptedAt: expect.any(String) } });
        expect(repeat.routes[0]!.reason).toMatch(new RegExp(`a duplicate: messageId "${id('a')}" was first accepted at `));
      }

      if (PROMTOOL_SKIP !== undefined) return void console.warn(`the /metrics part skipped: ${PROMTOOL_SKIP}`);
      const metrics = await scrape(collector.url);
      expectValidExposition(metrics.text);
      expect(metrics.value('batched_analytics_messages_deduplicated_total', { source: 'web' })).toBe(3);
      expect(metrics.value('batched_analytics_messages_deduplicated_total', { source: 'quiet' })).toBe(1);
      expect(metrics.value('batched_analytics_messages_accepted_total', { source: 'web' })).toBe(3);
    } finally {
      events.close();
    }
  });

  /**
   * Runs a collector on `dataDir` whose receiver never answers, sends `messageIds` to source `web`
   * in one batch, and kills it (-9) once each was attempted: their deliveries are still pending,
   * and a restart delivers each once from the journal.
   */
  async function acceptThenKill(dataDir: string, messageIds: readonly string[]): Promise<void> {
    const held: { destroy: () => void }[] = [];
    const silent = await startLoopback((_, res) => void held.push(res));
    const silentConfig = config({ sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: silent.url }] } } }] });
    const first = await startCollector(['--config', writeConfig(temp.dir, silentConfig, `silent-${run}.json`), '--port', '0', '--data-dir', dataDir]);
    expect((await postJson(`${first.url}/v1/batch`, { batch: messageIds.map(track) }, as('wk_web'))).status).toBe(200);
    await waitFor(() => silent.requests.length === messageIds.length, 'each attempted');
    expect(await first.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    held.forEach((res) => res.destroy());
    await silent.close();
  }

  it('remembers the ids it accepted across a kill -9 and a restart on the same data dir', async () => {
    const id = ids();
    // What the restart is sent again must add nothing to what the journal delivers.
    const dataDir = `${temp.dir}/data-kill`;
    await acceptThenKill(dataDir, [id('k1'), id('k2')]);

    const second = await startCollector(['--config', writeConfig(temp.dir, config(), 'kill-2.json'), '--port', '0', '--data-dir', dataDir]);
    expect((await postJson(`${second.url}/v1/batch`, { batch: [track(id('k1')), track(id('k3'))] }, as('wk_web'))).status).toBe(200);
    expect((await postJson(`${second.url}/v1/track`, track(id('k2')), as('wk_web'))).status).toBe(200);
    await settleWith(second, web, 'wk_web', id('end'));
    await waitFor(() => received(web, id('k1')) >= 1 && received(web, id('k2')) >= 1, 'the journal delivered k1 and k2');
    expect([received(web, id('k1')), received(web, id('k2')), received(web, id('k3'))]).toEqual([1, 1, 1]);
  });

  it("recognises a forwarded message's repeat after a kill -9 that came before its id reached the seen log: the journal's acceptance carries it", async () => {
    const id = ids();
    const dataDir = `${temp.dir}/data-unwritten`;
    await acceptThenKill(dataDir, [id('f')]);
    // The seen log is written behind the answer: as if the kill had come before that write.
    for (const name of readdirSync(dataDir).filter((file) => file.startsWith('seen-'))) unlinkSync(path.join(dataDir, name));

    const second = await startCollector(['--config', writeConfig(temp.dir, config(), 'unwritten.json'), '--port', '0', '--data-dir', dataDir]);
    expect((await postJson(`${second.url}/v1/track`, track(id('f')), as('wk_web'))).status).toBe(200);
    await settleWith(second, web, 'wk_web', id('end'));
    await waitFor(() => received(web, id('f')) >= 1, 'the journal delivered f');
    expect(received(web, id('f'))).toBe(1);
  });

  it('with dedupe.window 0 forwards every repeat', async () => {
    const id = ids();
    const collector = await startCollector(['--config', writeConfig(temp.dir, config({ dedupe: { window: 0 } }), 'off.json'), '--port', '0', '--data-dir', `${temp.dir}/data-off`]);
    expect((await postJson(`${collector.url}/v1/batch`, { batch: [track(id('o')), track(id('o'))] }, as('wk_web'))).status).toBe(200);
    expect((await postJson(`${collector.url}/v1/track`, track(id('o')), as('wk_web'))).status).toBe(200);
    await waitFor(() => received(web, id('o')) === 3, 'three deliveries of o');
  });
});

describe.skipIf(POSTGRES_SKIP !== undefined)(`serve: de-duplication on two collectors sharing PostgreSQL${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`, () => {
  it('forwards once what is sent to both at once, and once what is sent to one and then the other', async () => {
    const id = ids();
    const database = await cluster().createDatabase();
    const file = writeConfig(temp.dir, config({ store: database }), 'shared.json');
    const [one, two] = await Promise.all([startCollector(['--config', file, '--port', '0']), startCollector(['--config', file, '--port', '0'])]);
    const both = Array.from({ length: 50 }, (_, n) => id(`both-${n}`));
    // Each message goes to both collectors at the same moment, in batches that overlap in every id.
    const answers = await Promise.all([
      postJson(`${one!.url}/v1/batch`, { batch: both.map(track) }, as('wk_web')),
      postJson(`${two!.url}/v1/batch`, { batch: [...both].reverse().map(track) }, as('wk_web')),
      ...both.slice(0, 10).map((messageId, n) => postJson(`${(n % 2 ? one : two)!.url}/v1/track`, track(messageId), as('wk_web'))),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    expect((await postJson(`${one!.url}/v1/track`, track(id('later')), as('wk_web'))).status).toBe(200);
    expect((await postJson(`${two!.url}/v1/track`, track(id('later')), as('wk_web'))).status).toBe(200);
    await settleWith(one!, web, 'wk_web', id('end-1'));
    await settleWith(two!, web, 'wk_web', id('end-2'));
    expect([...both, id('later')].map((messageId) => received(web, messageId))).toEqual([...both, id('later')].map(() => 1));
  });
});
