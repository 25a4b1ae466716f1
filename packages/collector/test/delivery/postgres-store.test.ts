// The PostgreSQL store against a real server: a throwaway cluster for this file, a fresh database
// per test. Without PostgreSQL installed these tests skip (one line says why); under CI=true they fail.
import net from 'node:net';
import { hostname } from 'node:os';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore, type PostgresStoreOptions } from '../../src/delivery/postgres/store.js';
import { MIGRATIONS } from '../../src/delivery/postgres/schema.js';
import { StoreUnavailableError } from '../../src/delivery/store.js';
import { lateness } from '../../../../test/helpers/timing.js';
import { POSTGRES_SKIP, sql, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { delivery, storeContract } from './store-contract.js';

const cluster = useThrowawayCluster();

storeContract(
  'PostgresStore',
  async () => {
    const url = await cluster().createDatabase();
    return { make: (options) => new PostgresStore(url, options), remove: () => undefined };
  },
  POSTGRES_SKIP,
);

describe.skipIf(POSTGRES_SKIP !== undefined)(`PostgresStore${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`, () => {
  const stores: PostgresStore[] = [];
  const store = (url: string, options?: PostgresStoreOptions) => {
    const created = new PostgresStore(url, options);
    stores.push(created);
    return created;
  };
  afterAll(() => Promise.all(stores.map((s) => s.close())));

  it('creates its schema once when three collectors start at once on an empty database, and all three share it', async () => {
    const url = await cluster().createDatabase();
    const three = [store(url), store(url), store(url)];
    expect(await Promise.all(three.map((s) => s.open()))).toEqual([{ pending: 0 }, { pending: 0 }, { pending: 0 }]);
    await three[0]!.accept([delivery('p0')]);
    expect((await three[2]!.claim(10, 60_000)).map((held) => held.delivery.id)).toEqual(['p0']);
    expect(await sql(url, 'SELECT version FROM schema_version ORDER BY version')).toEqual(MIGRATIONS.map(({ version }) => ({ version })));
  });

  it('refuses a database migrated by a newer collector', async () => {
    const url = await cluster().createDatabase();
    await store(url).open();
    await sql(url, 'INSERT INTO schema_version (version) VALUES (99)');
    await expect(store(url).open()).rejects.toMatchObject({ code: 'ERR_SCHEMA_VERSION', message: expect.stringContaining('version 99') });
  });

  it('commits an acceptance as one statement: a refused row undoes the others', async () => {
    const url = await cluster().createDatabase();
    const first = store(url);
    await first.open();
    await first.accept([delivery('a')]);
    // 'a' is already stored: its primary key refuses the repeat, in the database this time.
    await expect(first.accept([delivery('b'), delivery('a')], { claim: 2, lease: 60_000 })).rejects.toMatchObject({ code: '23505' });
    expect(await sql(url, 'SELECT id, claim_id FROM deliveries')).toEqual([{ id: 'a', claim_id: null }]);
  });

  it('with keepSettledFor 0, deletes a settled delivery as it settles (attempts and all), and leaves the pending ones', async () => {
    const url = await cluster().createDatabase();
    const first = store(url, { keepSettledFor: 0 });
    await first.open();
    const [a, b] = await first.accept([delivery('a'), delivery('b'), delivery('c')], { claim: 2, lease: 60_000 });
    expect(await Promise.all([first.settle(a!, 'delivered'), first.settle(b!, 'failed')])).toEqual([true, true]);
    expect(await sql(url, 'SELECT id, status FROM deliveries')).toEqual([{ id: 'c', status: 'pending' }]);
    // Settled once: a second settlement of the same claim finds nothing to settle.
    expect(await first.settle(a!, 'delivered')).toBe(false);
    expect(await first.find('a')).toBeUndefined();
  });

  it('keeps settled deliveries for a day by default, so that they can be looked up and sent again', async () => {
    const url = await cluster().createDatabase();
    const first = store(url);
    await first.open();
    const [a] = await first.accept([delivery('a')], { claim: 1, lease: 60_000 });
    await first.settle(a!, 'delivered');
    expect(await sql(url, 'SELECT id, status FROM deliveries')).toEqual([{ id: 'a', status: 'delivered' }]);
    expect((await first.lookup('m-a')).map((record) => record.state)).toEqual(['delivered']);
  });

  it('writes settlements made moments apart in one statement, and all that wait when it closes', async () => {
    const url = await cluster().createDatabase();
    // Settled rows are kept here, so the transaction that settled each (its xmin) can be read.
    const first = store(url, { keepSettledFor: 60_000 });
    await first.open();
    const [a, b, c] = await first.accept([delivery('a'), delivery('b'), delivery('c')], { claim: 3, lease: 60_000 });
    const settled = [first.settle(a!, 'delivered')];
    await new Promise((resolve) => setImmediate(resolve));
    settled.push(first.settle(b!, 'failed'));
    expect(await Promise.all(settled)).toEqual([true, true]);
    const settledAt = await sql(url, `SELECT id, xmin::text AS tx FROM deliveries WHERE status <> 'pending' ORDER BY id`);
    expect(settledAt.map((row) => row.id)).toEqual(['a', 'b']);
    expect(settledAt[0]!.tx).toBe(settledAt[1]!.tx);

    const last = first.settle(c!, 'delivered');
    await first.close();
    expect(await last).toBe(true);
    expect(await sql(url, `SELECT id FROM deliveries WHERE status <> 'pending' ORDER BY id`)).toEqual([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
  });

  it('with keepSettledFor, keeps a settled delivery as a row with its outcome, who settled it and when, for retention to remove', async () => {
    const url = await cluster().createDatabase();
    const first = store(url, { keepSettledFor: 60_000 });
    await first.open();
    const [a, b] = await first.accept([delivery('a'), delivery('b'), delivery('c', 1_700_000_000_123)], { claim: 2, lease: 60_000 });
    await first.settle(a!, 'delivered');
    await first.settle(b!, 'failed');
    const rows = await sql<{ id: string; status: string; settled: boolean; received_at: string; claimed_by: string | null }>(
      url,
      'SELECT id, status, settled_at IS NOT NULL AS settled, received_at, claimed_by FROM deliveries ORDER BY seq',
    );
    const me = `${hostname()}:${process.pid}`;
    expect(rows).toEqual([
      { id: 'a', status: 'delivered', settled: true, received_at: '1000', claimed_by: me },
      { id: 'b', status: 'failed', settled: true, received_at: '1000', claimed_by: me },
      { id: 'c', status: 'pending', settled: false, received_at: '1700000000123', claimed_by: null },
    ]);
  });

  it('removes settled deliveries once keepSettledFor has passed, and keeps pending and recent ones', async () => {
    const url = await cluster().createDatabase();
    const first = new PostgresStore(url, { keepSettledFor: 300, sweepEvery: 50 });
    stores.push(first);
    await first.open();
    const [delivered, failed] = await first.accept([delivery('old-delivered'), delivery('old-failed'), delivery('waiting')], { claim: 2, lease: 60_000 });
    await first.settle(delivered!, 'delivered');
    await first.settle(failed!, 'failed');
    const ids = async () => (await sql<{ id: string }>(url, 'SELECT id FROM deliveries ORDER BY seq')).map((row) => row.id);
    // Settled just now: kept for keepSettledFor, although sweeps run every 50 ms.
    expect(await ids()).toEqual(['old-delivered', 'old-failed', 'waiting']);

    await expect.poll(ids, { timeout: 5_000, interval: 50 }).not.toContain('old-failed');
    const left = await ids();
    expect(left).toContain('waiting');
    expect(left).not.toContain('old-delivered');
    await first.close();
  });

  it('shares the queue between processes: concurrent claims never overlap, and one whose lease lapsed is taken over and refused', async () => {
    const url = await cluster().createDatabase();
    const [a, b, c] = [store(url), store(url), store(url)];
    await Promise.all([a.open(), b.open(), c.open()]);
    const all = Array.from({ length: 300 }, (_, i) => `x${i}`);
    await a.accept(all.map((id) => delivery(id)));
    // A lease long enough to outlast six concurrent claims on a loaded machine: one that lapsed
    // while they ran would hand its deliveries out twice, which is right, and not what is tested.
    const claims = await Promise.all([a, b, c, a, b, c].map((s) => s.claim(60, 1_000)));
    const handed = claims.flatMap((claimed) => claimed.map((held) => held.delivery.id));
    expect(handed).toHaveLength(300);
    expect(new Set(handed).size).toBe(300);

    // Every lease lapses: b takes everything over, and a's late settlements are refused.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const taken = await b.claim(1_000, 60_000);
    expect(taken).toHaveLength(300);
    expect(taken.every((held) => held.attempt === 2)).toBe(true);
    expect(await Promise.all(claims[0]!.map((held) => a.settle(held, 'delivered')))).toEqual(claims[0]!.map(() => false));
    expect(await Promise.all(taken.slice(0, 10).map((held) => b.settle(held, 'delivered')))).toEqual(Array(10).fill(true));
    expect(await sql(url, `SELECT count(*)::integer AS n FROM deliveries WHERE status = 'pending'`)).toEqual([{ n: 290 }]);
  });

  it('wakes the other processes when an acceptance leaves deliveries unclaimed, not when it claims them all', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = [store(url), store(url)];
    await Promise.all([a.open(), b.open()]);
    let woken = 0;
    b.onWork(() => (woken += 1));
    await a.accept([delivery('mine')], { claim: 1, lease: 60_000 });
    await a.accept([delivery('c1'), delivery('c2')], { claim: 1, lease: 60_000 });
    await expect.poll(() => woken, { timeout: 2_000, interval: 10 }).toBe(1);
    expect((await b.claim(10, 60_000)).map((held) => held.delivery.id)).toEqual(['c2']);
  });

  it('wakes the other processes when it hastens retries, not when there were none to hasten', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = [store(url), store(url)];
    await Promise.all([a.open(), b.open()]);
    let woken = 0;
    b.onWork(() => (woken += 1));
    const [held] = await a.accept([delivery('r')], { claim: 1, lease: 60_000 });
    await a.retry(held!, 60_000, [0], [], [0]);
    expect(await a.hasten('web', 1)).toBe(0);
    expect(await a.hasten('web', 0)).toBe(1);
    await expect.poll(() => woken, { timeout: 2_000, interval: 10 }).toBe(1);
    expect((await b.claim(10, 60_000)).map((claimed) => claimed.delivery.id)).toEqual(['r']);
  });

  it('listens again after its listening connection is cut, and is woken by the others from then on', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = [store(url), store(url)];
    await Promise.all([a.open(), b.open()]);
    let woken = 0;
    b.onWork(() => (woken += 1));
    const listening = async () =>
      (await sql<{ n: number }>(url, `SELECT count(*)::integer AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`))[0]!.n;
    expect(await listening()).toBe(2);
    await sql(url, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`);

    // Back, it wakes once on its own: work may have come while it was not listening.
    await expect.poll(listening, { timeout: 5_000, interval: 50 }).toBe(2);
    await expect.poll(() => woken, { timeout: 2_000, interval: 10 }).toBe(1);
    await a.accept([delivery('after')]);
    await expect.poll(() => woken, { timeout: 2_000, interval: 10 }).toBe(2);
  });

  it('runs audience syncs of two processes one after the other, so each change is recorded once', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = [store(url), store(url)];
    await Promise.all([a.open(), b.open()]);
    const seen: (string[] | undefined)[] = [];
    const sync = (s: PostgresStore, add: string) =>
      s.syncAudience('web', 'A', (previous) => {
        seen.push(previous?.members);
        const members = [...(previous?.members ?? []), add];
        return { deliveries: [delivery(`${add}-joined`)], state: { audience: 'A', members } };
      });
    await Promise.all([sync(a, 'u1'), sync(b, 'u2'), sync(a, 'u3'), sync(b, 'u4')]);
    expect(seen.map((members) => members?.length ?? 0).sort()).toEqual([0, 1, 2, 3]);
    expect(await sql(url, 'SELECT count(*)::integer AS n FROM deliveries')).toEqual([{ n: 4 }]);
  });

  it('refuses retention durations and timeouts that are not integers in range, naming the option', () => {
    expect(() => new PostgresStore('postgres://u@h/db', { keepSettledFor: -1 })).toThrow(expect.objectContaining({ code: 'ERR_CONFIG', option: 'keepSettledFor' }));
    expect(() => new PostgresStore('postgres://u@h/db', { sweepEvery: 0 })).toThrow(expect.objectContaining({ option: 'sweepEvery' }));
    expect(() => new PostgresStore('postgres://u@h/db', { connectTimeout: 0 })).toThrow(expect.objectContaining({ code: 'ERR_CONFIG', option: 'connectTimeout' }));
    expect(() => new PostgresStore('postgres://u@h/db', { queryTimeout: 1.5 })).toThrow(expect.objectContaining({ option: 'queryTimeout' }));
  });

  it('says which database it cannot reach, without its password, and is not usable after', async () => {
    const unreachable = store('postgres://someone:s3cret@127.0.0.1:1/nowhere');
    const error = await unreachable.open().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ERR_STORE_CONNECT', message: expect.stringContaining('postgres://someone:***@127.0.0.1:1/nowhere') });
    expect((error as Error).message).not.toContain('s3cret');
    await expect(unreachable.accept([delivery('a')])).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' });
  });

  it('gives up connecting after connectTimeout when the database accepts the connection and never answers', async () => {
    const peer = net.createServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    const { port } = peer.address() as net.AddressInfo;
    try {
      const started = performance.now();
      const baseline = lateness(500);
      await expect(store(`postgres://u@127.0.0.1:${port}/db`, { connectTimeout: 500 }).open()).rejects.toMatchObject({
        code: 'ERR_STORE_CONNECT',
        message: `Cannot open the PostgreSQL store postgres://u@127.0.0.1:${port}/db: no answer within 500 ms (postgres.connectTimeout)`,
      });
      // After the 500 ms asked for, not the default 3 s: a second beyond, plus however late a
      // timer of 500 ms set beside it fired on this run.
      expect(performance.now() - started).toBeLessThan(500 + (await baseline) + 1_000);
    } finally {
      peer.close();
      peer.unref();
    }
  });

  it('refuses an acceptance the server cancels after statementTimeout as unavailable, and accepts again on the same connections once it can', async () => {
    const url = await cluster().createDatabase();
    const first = store(url, { statementTimeout: 300, queryTimeout: 2_000 });
    await first.open();
    // Another session locks the table: the acceptance waits for the lock until the server cancels it.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE deliveries IN ACCESS EXCLUSIVE MODE');
    const started = performance.now();
    const baseline = lateness(300);
    const refused = await first.accept([delivery('a')]).catch((error: unknown) => error);
    // The server's cancel after the 300 ms statementTimeout (the message says so), in time: 1.2 s
    // beyond it, plus however late a timer of 300 ms set beside it fired on this run.
    expect(performance.now() - started).toBeLessThan(300 + (await baseline) + 1_200);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect(refused).toMatchObject({ message: 'PostgreSQL: canceling statement due to statement timeout (SQLSTATE 57014)', retryAfter: 5 });
    await holder.query('ROLLBACK');
    await holder.end();

    await first.accept([delivery('b')]);
    expect(await sql(url, 'SELECT id FROM deliveries')).toEqual([{ id: 'b' }]);
  });

  it('refuses an audience sync whose connection the server ends mid-transaction as unavailable, and goes on with new connections', async () => {
    const url = await cluster().createDatabase();
    const first = store(url);
    await first.open();
    // Another session holds the audience's lock: the sync waits for it inside its transaction.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', ['web', 'A']);
    const waiting = `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`;
    const sync = first.syncAudience('web', 'A', () => ({ deliveries: [delivery('joined')], state: { audience: 'A', members: ['u1'] } }));
    const outcome = sync.catch((error: unknown) => error);
    await expect.poll(async () => (await sql(url, waiting)).length, { timeout: 2_000, interval: 10 }).toBe(1);
    await sql(url, `SELECT pg_terminate_backend(pid) FROM (${waiting}) AS w`);
    expect(await outcome).toMatchObject({ code: 'ERR_STORE_UNAVAILABLE' });
    await holder.query('ROLLBACK');
    await holder.end();

    const { claimed } = await first.syncAudience('web', 'A', () => ({ deliveries: [delivery('joined')], state: { audience: 'A', members: ['u1'] } }));
    expect(claimed).toEqual([]);
    expect(await sql(url, 'SELECT id FROM deliveries')).toEqual([{ id: 'joined' }]);
  });

  it('refuses a connection string that is not a PostgreSQL URL, naming the option', () => {
    for (const bad of ['mysql://u@h/db', 'localhost:5432', '']) {
      expect(() => new PostgresStore(bad)).toThrow(expect.objectContaining({ code: 'ERR_CONFIG', option: 'connectionString' }));
    }
    expect(new PostgresStore('postgresql://u@h:5432/db')).toBeInstanceOf(PostgresStore);
  });

  it('upgrades a database of schema version 3 in place: its pending deliveries kept, message ids remembered from then on', async () => {
    const url = await cluster().createDatabase();
    await sql(url, 'CREATE TABLE schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    for (const migration of MIGRATIONS.filter(({ version }) => version <= 3)) {
      await sql(url, migration.sql);
      await sql(url, 'INSERT INTO schema_version (version) VALUES ($1)', [migration.version]);
    }
    await sql(url, `INSERT INTO deliveries (id, source, message, message_id, type, body, received_at) VALUES ('old', 'web', '{}', 'm-old', 'track', '{}', 1)`);
    const upgraded = store(url);
    expect(await upgraded.open()).toEqual({ pending: 1 });
    const arrival = { ...delivery('new'), id: 'new' };
    expect((await upgraded.ingest([{ source: 'web', messageId: 'm-new', delivery: arrival }])).repeats).toEqual([undefined]);
    expect((await upgraded.ingest([{ source: 'web', messageId: 'm-new', delivery: { ...arrival, id: 'again' } }])).repeats[0]).toBeTypeOf('number');
    expect((await sql(url, 'SELECT id FROM deliveries ORDER BY id')).map((row) => row.id)).toEqual(['new', 'old']);
  });

  it('deletes message ids older than the window in its sweeps, and keeps the others', async () => {
    const url = await cluster().createDatabase();
    const swept = store(url, { dedupeWindow: 60_000, sweepEvery: 50 });
    await swept.open();
    const now = Date.now();
    await sql(url, `INSERT INTO message_ids (source, message_id, accepted_at) SELECT 'web', 'old-' || n, $1 FROM generate_series(1, 12000) AS n`, [now - 61_000]);
    await swept.ingest([{ source: 'web', messageId: 'recent' }]);
    await expect.poll(async () => (await sql(url, 'SELECT message_id FROM message_ids')).map((row) => row.message_id), { timeout: 10_000, interval: 50 }).toEqual(['recent']);
  });
});
