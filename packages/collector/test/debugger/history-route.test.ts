// `GET /history` pages back through the kept events; without `before` it starts from the newest.
import { afterAll, afterEach, expect, it } from 'vitest';
import { basic, postJson, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';

const temp = tempDir();
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
