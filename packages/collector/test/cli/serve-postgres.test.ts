// `batched-analytics serve --store postgres://…`: the real executable on a throwaway PostgreSQL
// cluster, forwarding to a loopback receiver. Skips without PostgreSQL; fails so under CI=true.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { basic, oneWebhookConfig, postJson, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { POSTGRES_SKIP, sql, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { type ReceivedRequest, status, useReceivers } from '../../../../test/helpers/receiver.js';

const cluster = useThrowawayCluster();
const temp = tempDir();
const receiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

const config = oneWebhookConfig;

const track = (event: string) => ({ type: 'track', userId: 'u1', event, properties: { text: 'Café ☕' } });

const rows = (url: string) => sql<{ body: string; status: string }>(url, 'SELECT body, status FROM deliveries ORDER BY seq');

describe.skipIf(POSTGRES_SKIP !== undefined)(`serve --store${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`, () => {
  it('keeps accepted messages in the database of --store, which wins over the config, and forwards them', async () => {
    const database = await cluster().createDatabase();
    // Answered only once the test has read what the database holds.
    const answers: (() => void)[] = [];
    const hooks = await receiver((request, res, n) => answers.push(() => status(200)(request, res, n)));
    // The config's store does not exist: starting at all shows the flag was used instead.
    const file = writeConfig(temp.dir, config(hooks.url, { store: database.replace(/\/[^/]+$/, '/missing') }), 'flag.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--store', database]);
    await waitFor(() => collector.stderr().includes(`store:        ${database}`), 'the store in the report');

    const res = await postJson(`${collector.url}/v1/batch`, { batch: [track('One'), track('Two')] }, { authorization: basic('wk_web') });
    expect(res.status).toBe(200);
    const stored = await rows(database);
    expect(stored.map((row) => row.status)).toEqual(['pending', 'pending']);
    await waitFor(() => answers.length === 2, 'both requests');
    expect(hooks.requests.map((request) => request.raw.toString('utf8')).sort()).toEqual(stored.map((row) => row.body).sort());
    for (const answer of answers) answer();
    // Delivered, and kept for the retention.
    await expect.poll(async () => (await rows(database)).map((row) => row.status), { timeout: 5_000, interval: 20 }).toEqual(['delivered', 'delivered']);
  });

  it('with the config\'s "store", keeps what is undelivered across a restart and sends the same bytes after it', async () => {
    const database = await cluster().createDatabase();
    let answer = 503;
    const accepted: ReceivedRequest[] = [];
    const hooks = await receiver((request, res, n) => {
      if (answer === 200) accepted.push(request);
      status(answer)(request, res, n);
    });
    const file = writeConfig(temp.dir, config(hooks.url, { store: database }), 'entry.json');
    const first = await startCollector(['--config', file, '--port', '0']);
    expect((await postJson(`${first.url}/v1/track`, track('Later'), { authorization: basic('wk_web') })).status).toBe(200);
    const refused = await hooks.nth(1);
    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(first.stderr()).toContain('undelivered messages stay in the database');

    answer = 200;
    const second = await startCollector(['--config', file, '--port', '0']);
    await waitFor(() => second.stderr().includes('1 undelivered message(s) pending in the database'), 'the resumed count');
    await waitFor(() => accepted.length > 0, 'the delivery after the restart');
    expect(accepted[0]!.raw.equals(refused.raw)).toBe(true);
    await expect.poll(async () => (await rows(database)).map((row) => row.status), { timeout: 5_000, interval: 20 }).toEqual(['delivered']);
  });
});
