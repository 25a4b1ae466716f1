// `GET /history` pages back through the kept events; without `before` it starts from the newest.
import { afterAll, afterEach, expect, it } from 'vitest';
import { basic, oneWebhookConfig, postJson, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';
import { serveStores, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { useReceivers } from '../../../../test/helpers/receiver.js';

const temp = tempDir();
const receiver = useReceivers();
const cluster = useThrowawayCluster();
afterEach(stopAll);
afterAll(() => temp.remove());

it('answers the newest page without `before`, and the next one with it', async () => {
  const collector = await startCollector(['--config', writeConfig(temp.dir, { sources: [{ name: 'web', writeKey: 'wk_web' }] }), '--port', '0', '--data-dir', `${temp.dir}/d`]);
  for (const event of ['first', 'second', 'third']) {
    expect((await postJson(`${collector.url}/v1/track`, { userId: 'u1', event }, { authorization: basic('wk_web') })).status).toBe(200);
  }
  type Page = { events: { id: string; message: { event: string } }[]; more: boolean };
  const newest = await fetch(`${collector.url}/history?limit=2`);
  expect(newest.status).toBe(200);
  const page = (await newest.json()) as Page;
  expect(page.events.map((view) => view.message.event)).toEqual(['third', 'second']);
  expect(page.more).toBe(true);
  const next = (await (await fetch(`${collector.url}/history?limit=2&before=${page.events[1]!.id}`)).json()) as Page;
  expect(next).toMatchObject({ events: [{ message: { event: 'first' } }], more: false });
});

it.for(serveStores(temp.dir, cluster))('with %s: keeps the newest events of a backlog longer than historyEvents once each, as they arrived, once the backlog is delivered', { timeout: 30_000 }, async ([name, flags, skip], ctx) => {
  if (skip !== undefined) ctx.skip(skip);
  let up = false;
  const delivered = new Set<string>();
  const { url } = await receiver((request, res) => {
    if (!up) return void res.writeHead(503).end();
    delivered.add((JSON.parse(request.raw.toString()) as { messageId: string }).messageId);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  const config = writeConfig(temp.dir, oneWebhookConfig(url, { historyEvents: 200 }), `backlog-${name}.json`);
  const collector = await startCollector(['--config', config, '--port', '0', ...(await flags())]);
  for (let from = 0; from < 300; from += 100) {
    const batch = Array.from({ length: 100 }, (_, i) => ({ type: 'track', userId: 'u1', event: `e${from + i}`, messageId: `m${from + i}` }));
    expect((await postJson(`${collector.url}/v1/batch`, { batch }, { authorization: basic('wk_web') })).status).toBe(200);
  }
  up = true;
  await waitFor(() => delivered.size === 300, 'every message delivered', 20_000);
  type Shown = { id: string; origin: string; status: string; message: { event: string } };
  let events: Shown[] = [];
  const settled = async () => {
    events = ((await (await fetch(`${collector.url}/history?limit=500`)).json()) as { events: Shown[] }).events;
    return events.every((view) => view.status === 'delivered');
  };
  for (const deadline = Date.now() + 5_000; !(await settled()) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
  // The page let go of the first 100 while they waited; it does not list them again when they are
  // delivered, as replays pushing out the next ones still waiting.
  expect(events.map((view) => view.message.event)).toEqual(Array.from({ length: 200 }, (_, i) => `e${299 - i}`));
  expect(new Set(events.map((view) => view.origin))).toEqual(new Set(['api']));
  expect(events.every((view) => view.status === 'delivered')).toBe(true);
});
