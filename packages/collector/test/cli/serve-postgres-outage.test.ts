// `batched-analytics serve --store postgres://…` when the database does not answer: a peer that
// accepts TCP and stays silent, a cluster frozen with SIGSTOP, a cluster stopped with pg_ctl. The
// real executable, a throwaway cluster and a loopback receiver. The PostgreSQL tests skip without
// it (one line says why) and fail so under CI=true; the silent peer needs no server.
import net from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { POSTGRES_TIMEOUTS } from '../../src/config/postgres-timeouts.js';
import { basic, type Collector, postJson, runCli, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';
import { POSTGRES_SKIP, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { type Receiver, useReceivers } from '../../../../test/helpers/receiver.js';

const cluster = useThrowawayCluster();
const temp = tempDir();
const receiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

/** The client's default request timeout: a 503 must come well before it, or the client re-sends blind. */
const CLIENT_TIMEOUT = 10_000;

const config = (url: string, extra: Record<string, unknown> = {}) => ({
  sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url }] } } }],
  delivery: { minRetryDelay: 50, maxRetryDelay: 200 },
  // A claim whose settlement the outage lost is handed out again after a second, not 30.
  queue: { lease: 1_000, pollInterval: 100 },
  ...extra,
});

/**
 * A peer that accepts connections and never answers, as a database whose host hangs; `connected`
 * says when (Date.now()) the first connection came, and `connections` how many came.
 */
async function silentPeer(): Promise<{ port: number; connected: Promise<number>; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  let onConnected!: (at: number) => void;
  const connected = new Promise<number>((resolve) => (onConnected = resolve));
  const server = net.createServer((socket) => {
    count += 1;
    onConnected(Date.now());
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connected,
    connections: () => count,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Sends one track call as the client would, giving up after the client's timeout; notes the events answered 200. */
function sender(collector: Collector, answered: string[]) {
  let sent = 0;
  return async (name: string) => {
    const event = `${name}-${++sent}`;
    const started = Date.now();
    const res = await postJson(
      `${collector.url}/v1/batch`,
      { batch: [{ type: 'track', userId: 'u1', event }] },
      { authorization: basic('wk_web') },
      AbortSignal.timeout(CLIENT_TIMEOUT),
    );
    if (res.status === 200) answered.push(event);
    return { ...res, took: Date.now() - started };
  };
}

/** The events a receiver was sent. */
const received = (hooks: Receiver) => new Set(hooks.requests.map((request) => (JSON.parse(request.raw.toString('utf8')) as { event: string }).event));

it('exits 1 after the config\'s connect timeout, with one line naming the database without its password, when the database never answers', async () => {
  const peer = await silentPeer();
  try {
    // No waiting for the database to come up: this is about one try's connectTimeout.
    const file = writeConfig(temp.dir, config('http://127.0.0.1:9/hook', { postgres: { connectTimeout: 1_000, startTimeout: 0 } }), 'silent.json');
    const started = Date.now();
    const result = await runCli(['serve', '--config', file, '--port', '0', '--store', `postgres://collector:s3cret@127.0.0.1:${peer.port}/analytics`]);
    const exited = Date.now();
    expect(result.code).toBe(1);
    // One try of the config's 1 s, timed from the connection it made (so Node's cold start, slow
    // on a busy machine, is not counted): not a second try, and nearer 1 s than the default 3 s.
    expect(peer.connections()).toBe(1);
    expect(exited - started).toBeGreaterThanOrEqual(1_000);
    expect(exited - (await peer.connected)).toBeLessThan((1_000 + POSTGRES_TIMEOUTS.connectTimeout) / 2);
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      `batched-analytics serve: cannot start: Cannot open the PostgreSQL store postgres://collector:***@127.0.0.1:${peer.port}/analytics: no answer within 1000 ms (postgres.connectTimeout)`,
    ]);
  } finally {
    await peer.close();
  }
});

describe.skipIf(POSTGRES_SKIP !== undefined)(`serve --store, database outages${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`, () => {
  it('answers 503 with Retry-After well within the client timeout while the database is frozen, 200 once it thaws, and delivers every message it answered 200 for', async () => {
    const database = await cluster().createDatabase();
    const hooks = await receiver();
    const collector = await startCollector(['--config', writeConfig(temp.dir, config(hooks.url, { store: database }), 'frozen.json'), '--port', '0']);
    const answered: string[] = [];
    const send = sender(collector, answered);
    expect((await send('before')).status).toBe(200);

    cluster().freeze();
    try {
      // Twice: the first finds a pooled connection to the frozen server, the second may open one.
      for (const attempt of [await send('frozen'), await send('frozen')]) {
        expect(attempt).toMatchObject({ status: 503, body: { code: 'ERR_STORE_UNAVAILABLE' } });
        expect(attempt.headers.get('retry-after')).toBe('5');
        expect(attempt.took).toBeLessThan(6_000);
      }
    } finally {
      cluster().thaw();
    }

    await expect.poll(async () => (await send('after')).status, { timeout: 15_000, interval: 200 }).toBe(200);
    await expect.poll(() => answered.filter((event) => !received(hooks).has(event)), { timeout: 10_000, interval: 50 }).toEqual([]);
    expect(collector.child.exitCode).toBeNull();
  }, 60_000);

  it('answers 503 with Retry-After while PostgreSQL is stopped, reports it without DEBUG, and takes and delivers messages again once it is started', async () => {
    const database = await cluster().createDatabase();
    const hooks = await receiver();
    const collector = await startCollector(['--config', writeConfig(temp.dir, config(hooks.url, { store: database }), 'stopped.json'), '--port', '0']);
    const answered: string[] = [];
    const send = sender(collector, answered);
    expect((await send('before')).status).toBe(200);

    await cluster().shutDown();
    try {
      const refused = await send('stopped');
      expect(refused).toMatchObject({ status: 503, body: { code: 'ERR_STORE_UNAVAILABLE' } });
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.took).toBeLessThan(6_000);
      // Without DEBUG, one line each, no stack trace: the listening connection is always open, so always lost.
      await expect
        .poll(() => collector.stderr(), { timeout: 5_000, interval: 50 })
        .toMatch(/ WARN collector: the PostgreSQL connection listening on batched_analytics_work was lost: terminating connection due to administrator command \(SQLSTATE 57P01\)\n/);
      expect(collector.stderr()).toMatch(/ ERROR collector: POST \/v1\/batch refused, the store is unavailable: PostgreSQL: /);
      expect(collector.stderr()).not.toMatch(/^\s+at /m);
      // A lookup is a read: it is told so, not that nothing was recorded.
      const lookup = await fetch(`${collector.url}/v1/messages/before`);
      expect(lookup.status).toBe(503);
      expect(lookup.headers.get('retry-after')).toBe('5');
      expect((await lookup.json()).error).toMatch(/^The collector cannot read its store now \(PostgreSQL: .*\): try again after 5 s$/);
    } finally {
      await cluster().startUp();
    }

    await expect.poll(async () => (await send('after')).status, { timeout: 15_000, interval: 200 }).toBe(200);
    await expect.poll(() => answered.filter((event) => !received(hooks).has(event)), { timeout: 10_000, interval: 50 }).toEqual([]);
    expect(collector.child.exitCode).toBeNull();
  }, 60_000);

  it('stops on SIGTERM while the database is frozen, after its timeouts rather than once it thaws', async () => {
    const database = await cluster().createDatabase();
    const hooks = await receiver();
    const collector = await startCollector(['--config', writeConfig(temp.dir, config(hooks.url, { store: database }), 'stop-frozen.json'), '--port', '0']);
    expect((await sender(collector, [])('before')).status).toBe(200);
    cluster().freeze();
    try {
      const started = Date.now();
      expect(await collector.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      // The server does not close the connections it is asked to: they are cut after queryTimeout (4 s).
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      cluster().thaw();
    }
  }, 60_000);
});
