// What a load balancer points at: `/healthz` (the process serves) and `/readyz` (send it traffic),
// which turns 503 at once on SIGTERM while ingestion keeps answering for `server.drainDelay`.
// Real `serve` processes and a real receiver.
import { afterAll, afterEach, expect, it } from 'vitest';
import { basic, postJson, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';
import { useReceivers } from '../../../../test/helpers/receiver.js';

const temp = tempDir();
const receiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

const ADMIN = 'admin-token-0123456789';

it('answers /healthz and /readyz without credentials, showing no data, even on every address', async () => {
  const config = writeConfig(temp.dir, { adminToken: ADMIN, sources: [{ name: 'web', writeKey: 'wk_web' }] }, 'health.json');
  const collector = await startCollector(['--config', config, '--host', '0.0.0.0', '--port', '0', '--data-dir', `${temp.dir}/health`]);
  const healthz = await fetch(`${collector.url}/healthz`);
  expect(healthz.status).toBe(200);
  expect(await healthz.json()).toEqual({ status: 'ok' });
  const readyz = await fetch(`${collector.url}/readyz`);
  expect(readyz.status).toBe(200);
  expect(await readyz.json()).toEqual({ ready: true });
  expect(readyz.headers.get('cache-control')).toBe('no-store');
});

it('on SIGTERM: /readyz answers 503 at once, ingestion keeps answering for the drain delay, then it stops and delivers what it accepted', async () => {
  const hooks = await receiver();
  const config = writeConfig(
    temp.dir,
    { sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: hooks.url }] } } }], server: { drainDelay: 3_000 } },
    'drain.json',
  );
  const collector = await startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/drain`]);
  const send = (event: string) => postJson(`${collector.url}/v1/track`, { userId: 'u1', event }, { authorization: basic('wk_web') });
  expect((await send('before')).status).toBe(200);

  const stopping = Date.now();
  const stopped = collector.stop('SIGTERM');
  await expect.poll(async () => (await fetch(`${collector.url}/readyz`)).status, { interval: 20, timeout: 3_000 }).toBe(503);
  const readyz = await fetch(`${collector.url}/readyz`);
  expect(await readyz.json()).toEqual({ ready: false, reason: 'stopping' });
  // At once, not at the drain's end: within its first half, which leaves a busy machine 1.5 s to
  // deliver the signal and the answer.
  expect(Date.now() - stopping).toBeLessThan(3_000 / 2);
  // Still taking messages: the load balancer has not stopped sending yet.
  expect((await send('draining')).status).toBe(200);
  expect((await fetch(`${collector.url}/healthz`)).status).toBe(200);

  expect(await stopped).toEqual({ code: 0, signal: null });
  expect(Date.now() - stopping).toBeGreaterThanOrEqual(3_000);
  const events = hooks.requests.map((request) => (JSON.parse(request.raw.toString('utf8')) as { event: string }).event);
  expect(events.sort()).toEqual(['before', 'draining']);
});
