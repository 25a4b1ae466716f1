import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Analytics, VERSION } from '../../src/index.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';

const run = promisify(execFile);
let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the default transport (undici) against a real server', () => {
  it('POSTs {batch, sentAt} to /v1/batch with basic auth, JSON and a User-Agent', async () => {
    server = await startLoopback();
    const analytics = new Analytics('wk_live', { endpoint: server.url });
    analytics.track({ userId: 'u1', event: 'Signed Up', properties: { plan: 'pro', emoji: '🎉' }, timestamp: '2024-02-03T04:05:06Z' });
    expect(await analytics.close()).toEqual({ delivered: 1, failed: 0, dropped: 0 });

    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', url: '/v1/batch' });
    expect(request!.headers).toMatchObject({
      authorization: `Basic ${Buffer.from('wk_live:').toString('base64')}`,
      'content-type': 'application/json',
      'user-agent': `batched-analytics/${VERSION} (node ${process.version})`,
      'content-length': String(Buffer.byteLength(request!.body)),
    });
    const body = JSON.parse(request!.body);
    expect(Object.keys(body)).toEqual(['batch', 'sentAt']);
    expect(body.batch[0]).toEqual({
      type: 'track',
      userId: 'u1',
      event: 'Signed Up',
      properties: { plan: 'pro', emoji: '🎉' },
      timestamp: '2024-02-03T04:05:06.000Z',
      messageId: expect.any(String),
      context: { library: { name: 'batched-analytics', version: VERSION } },
    });
  });

  it('reuses one keep-alive connection for consecutive batches', async () => {
    server = await startLoopback();
    const analytics = new Analytics('wk', { endpoint: server.url, flushAt: 1, maxInFlight: 1 });
    for (let n = 0; n < 5; n++) analytics.track({ userId: `u${n}`, event: 'e' });
    expect(await analytics.close()).toMatchObject({ delivered: 5 });
    expect(server.requests).toHaveLength(5);
    expect(server.connections()).toBe(1);
  });

  it('retries a 503 over the wire with the same messages', async () => {
    let calls = 0;
    server = await startLoopback((_, res) => {
      res.statusCode = calls++ === 0 ? 503 : 200;
      res.end();
    });
    const analytics = new Analytics('wk', { endpoint: server.url, minRetryDelay: 1 });
    analytics.track({ userId: 'u', event: 'e' });
    expect(await analytics.close()).toMatchObject({ delivered: 1 });
    expect(server.requests.map((r) => JSON.parse(r.body).batch[0].messageId)).toEqual([
      expect.any(String),
      JSON.parse(server.requests[0]!.body).batch[0].messageId,
    ]);
  });
});

describe('process lifetime', () => {
  const script = fileURLToPath(new URL('../fixtures/script-ends.mjs', import.meta.url));

  it('a script that queues calls and simply ends still delivers them, then exits promptly', async () => {
    server = await startLoopback();
    const started = Date.now();
    const { stdout } = await run(process.execPath, [script, server.url, '300'], { timeout: 10_000 });
    const elapsed = Date.now() - started;

    expect(stdout.trim()).toBe('queued 3');
    expect(server.requests.flatMap((r) => JSON.parse(r.body).batch.map((m: { event: string }) => m.event))).toEqual(['a', 'b', 'c']);
    // flushAfter is 300 ms; undici keeps idle sockets for 4 s, so a held socket would show here.
    expect(elapsed).toBeLessThan(3_000);
  });

  it('DEBUG=analytics logs queueing, sending and delivery, each line naming the client; nothing is printed without it', async () => {
    server = await startLoopback();
    const debug = await run(process.execPath, [script, server.url, '50'], { env: { ...process.env, DEBUG: 'analytics' } });
    // The client's label: the write key's first four characters and its number in the process.
    expect(debug.stderr).toMatch(/analytics \[wk#1\] queued track/);
    expect(debug.stderr).toMatch(/analytics \[wk#1\] sending 3 messages/);
    expect(debug.stderr).toMatch(/analytics \[wk#1\] delivered 3 messages: status 200/);

    const quiet = await run(process.execPath, [script, server.url, '50'], { env: { ...process.env, DEBUG: '' } });
    expect(quiet.stderr).toBe('');
  });
});
