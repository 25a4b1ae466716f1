// SIGHUP to a real `serve` process: the config file is read again and applied to what comes
// next, without a restart, without losing or repeating a delivery in flight; an invalid file is
// refused, named in the log, and the running config stays.
import { writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { signBody } from 'batched-analytics/internal';
import { basic, type Collector, oneWebhookConfig, postJson, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { runCli } from '../../../../test/helpers/cli.js';
import { drained, scrape } from '../../../../test/helpers/metrics.js';
import { type ReceivedRequest, type Receiver, status, useReceivers } from '../../../../test/helpers/receiver.js';

const temp = tempDir();
const receiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

const config = oneWebhookConfig;
const auth = { authorization: basic('wk_web') };
const track = (n: number) => ({ type: 'track', userId: 'u1', event: `E${n}`, properties: {}, messageId: `m-${n}` });
const messageIds = (hooks: Receiver) => hooks.requests.map((request) => JSON.parse(request.raw.toString('utf8')).messageId as string);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `m-${from + i}`);

/** Sends SIGHUP and waits for the reload's line (the `count`-th reload line). */
async function reload(collector: Collector, line: string, count = 1): Promise<void> {
  collector.child.kill('SIGHUP');
  await waitFor(() => collector.stderr().split(line).length > count, `reload line ${JSON.stringify(line)}`);
}


describe('serve: SIGHUP reloads the config', () => {
  it('sends new deliveries to a changed webhook URL, while those in flight finish at the old one: none lost, none twice', async () => {
    const held: (() => void)[] = [];
    const old = await receiver((request: ReceivedRequest, res: ServerResponse, n: number) => held.push(() => status(200)(request, res, n)));
    const next = await receiver(status(200));
    const file = writeConfig(temp.dir, config(old.url), 'moved.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/moved`]);

    expect((await postJson(`${collector.url}/v1/batch`, { batch: [0, 1, 2, 3, 4].map(track) }, auth)).status).toBe(200);
    await waitFor(() => held.length === 5, 'five requests in flight at the old URL');
    writeFileSync(file, JSON.stringify(config(next.url)));
    await reload(collector, 'config reloaded');
    expect((await postJson(`${collector.url}/v1/batch`, { batch: [5, 6, 7, 8, 9].map(track) }, auth)).status).toBe(200);
    await waitFor(() => next.requests.length === 5, 'the new deliveries at the new URL');
    // The old URL answers only now: the attempts begun before the reload complete there.
    for (const answer of held) answer();
    await drained(collector.url, 10);

    expect(messageIds(old).sort()).toEqual(range(0, 5));
    expect(messageIds(next).sort()).toEqual(range(5, 10));
    const after = await scrape(collector.url);
    expect(after.value('batched_analytics_deliveries_total', { outcome: 'delivered' })).toBe(10);
    expect(after.value('batched_analytics_delivery_retries_total')).toBe(0);
  });

  it('sends the next attempt of a delivery that is retrying to the new URL', async () => {
    const down = await receiver(status(503));
    const up = await receiver(status(200));
    const file = writeConfig(temp.dir, config(down.url), 'retrying.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/retrying`]);
    expect((await postJson(`${collector.url}/v1/track`, track(0), auth)).status).toBe(200);
    await down.nth(2);

    writeFileSync(file, JSON.stringify(config(up.url)));
    await reload(collector, 'config reloaded');
    await drained(collector.url, 1);
    expect(messageIds(up)).toEqual(['m-0']);
    expect(new Set(messageIds(down))).toEqual(new Set(['m-0']));
  });

  it('refuses an invalid file, naming the entry, and keeps the running config', async () => {
    const hooks = await receiver(status(200));
    const file = writeConfig(temp.dir, config(hooks.url), 'invalid.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/invalid`]);

    writeFileSync(file, JSON.stringify({ ...config('http://127.0.0.1:9/elsewhere'), sources: [{ name: 'web', writeKey: 'wk_other' }], delivery: { timeout: 0 } }));
    await reload(collector, 'reload refused');
    expect(collector.stderr()).toMatch(/ERROR collector: config reload refused, the running config stays: .*`delivery\.timeout` to be an integer >= 1/);
    writeFileSync(file, '{ "sources": [');
    await reload(collector, 'reload refused', 2);
    // The wording of a start with the same file.
    expect(collector.stderr()).toContain(`reload refused, the running config stays: Config file ${file} is not valid JSON: Unexpected end of JSON input`);

    // The old write key and URL still work; the new key does not.
    expect((await postJson(`${collector.url}/v1/track`, track(1), auth)).status).toBe(200);
    expect((await postJson(`${collector.url}/v1/track`, track(2), { authorization: basic('wk_other') })).status).toBe(401);
    await drained(collector.url, 1);
    expect(messageIds(hooks)).toEqual(['m-1']);
  });

  it('names what is wrong with a file that is not JSON, at start and on reload alike, without quoting its text', async () => {
    const file = writeConfig(temp.dir, config('http://127.0.0.1:9/'), 'quoted.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/quoted`]);
    // A bare word where a string belongs: V8's message would quote the text around it.
    const broken = '{ "adminToken": s3cret-admin-token }';
    writeFileSync(file, broken);
    await reload(collector, 'reload refused');
    const atStart = await runCli(['serve', '--config', file, '--port', '0', '--data-dir', `${temp.dir}/quoted-start`]);

    const why = `Config file ${file} is not valid JSON: Unexpected token 's' at line 1, column 17`;
    expect(collector.stderr()).toContain(`reload refused, the running config stays: ${why}\n`);
    expect(atStart.stderr).toContain(`${why} (run`);
    expect(collector.stderr() + atStart.stderr).not.toContain('s3cret');
  });

  it('applies a new source, headers and secret at once, and reports what needs a restart, leaving it as it runs', async () => {
    const hooks = await receiver(status(200));
    const file = writeConfig(temp.dir, config(hooks.url), 'restart.json');
    const collector = await startCollector(['--config', file, '--port', '0', '--data-dir', `${temp.dir}/restart`]);

    const changed = config(hooks.url, { server: { maxConnections: 7 }, historyEvents: 500 });
    // The existing source's headers and secret change too.
    changed.sources[0]!.destinations.Webhooks = { webhooks: [{ url: hooks.url, headers: { 'X-Env': 'reloaded' } }], sharedSecret: 'reloaded-secret' } as never;
    (changed.sources as unknown[]).push({ name: 'app', writeKey: 'wk_app', destinations: { Webhooks: { webhooks: [{ url: hooks.url }] } } });
    writeFileSync(file, JSON.stringify(changed));
    await reload(collector, 'config reloaded');
    // A line of its own, written after the reload's: it may come in a later chunk of stderr.
    await expect.poll(() => collector.stderr(), { timeout: 5_000 }).toMatch(/WARN collector: server, historyEvents changed in .*restart\.json; the running values stay until a restart/);

    expect((await postJson(`${collector.url}/v1/track`, track(3), { authorization: basic('wk_app') })).status).toBe(200);
    expect((await postJson(`${collector.url}/v1/track`, track(4), auth)).status).toBe(200);
    await drained(collector.url, 2);
    expect((await scrape(collector.url)).value('batched_analytics_deliveries_total', { source: 'app', outcome: 'delivered' })).toBe(1);
    const web = hooks.requests.find((request) => JSON.parse(request.raw.toString('utf8')).messageId === 'm-4')!;
    expect(web.headers['x-env']).toBe('reloaded');
    expect(web.headers['x-signature']).toBe(signBody(web.raw.toString('utf8'), 'reloaded-secret'));
  });
});
