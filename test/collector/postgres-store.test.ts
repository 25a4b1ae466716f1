// The PostgreSQL store against a real server: a throwaway cluster for this file, a fresh database
// per test. Without PostgreSQL installed these tests skip (one line says why); under CI=true they fail.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/collector/postgres/store.js';
import { POSTGRES_SKIP, useThrowawayCluster } from '../helpers/postgres.js';
import { delivery, storeContract } from './store-contract.js';

const cluster = useThrowawayCluster();

storeContract(
  'PostgresStore',
  async () => {
    const url = await cluster().createDatabase();
    return { make: () => new PostgresStore(url), remove: () => undefined };
  },
  POSTGRES_SKIP,
);

/** Runs one query on its own connection. */
async function sql<Row extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe.skipIf(POSTGRES_SKIP !== undefined)(`PostgresStore${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`, () => {
  const stores: PostgresStore[] = [];
  const store = (url: string) => {
    const created = new PostgresStore(url);
    stores.push(created);
    return created;
  };
  afterAll(() => Promise.all(stores.map((s) => s.close())));

  it('creates its schema once when three collectors start at once on an empty database, and lets only one use it', async () => {
    const url = await cluster().createDatabase();
    const three = [store(url), store(url), store(url)];
    const opened = await Promise.allSettled(three.map((s) => s.open()));
    expect(opened.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of opened.filter((r) => r.status === 'rejected')) {
      expect(result.reason).toMatchObject({ code: 'ERR_STORE_IN_USE', message: expect.stringContaining('one collector per database') });
    }
    const sole = three[opened.findIndex((result) => result.status === 'fulfilled')]!;
    await sole.accept([delivery('p0')]);
    await sole.close();

    const again = store(url);
    expect((await again.open()).pending.map((d) => d.id)).toEqual(['p0']);
    expect(await sql(url, 'SELECT version FROM schema_version ORDER BY version')).toEqual([{ version: 1 }, { version: 2 }]);
  });

  it('refuses a database migrated by a newer collector', async () => {
    const url = await cluster().createDatabase();
    await store(url).open();
    await sql(url, 'INSERT INTO schema_version (version) VALUES (99)');
    await expect(store(url).open()).rejects.toMatchObject({ code: 'ERR_SCHEMA_VERSION', message: expect.stringContaining('version 99') });
  });

  it('commits an acceptance as one statement: a refused row undoes the others and the audience', async () => {
    const url = await cluster().createDatabase();
    const first = store(url);
    await first.open();
    await first.accept([delivery('a')], { source: 'web', state: { audience: 'A', members: ['u1'] } });
    // 'a' is already stored: its primary key refuses the repeat, in the database this time.
    await expect(first.accept([delivery('b'), delivery('a')], { source: 'web', state: { audience: 'A', members: ['u2'] } })).rejects.toMatchObject({
      code: '23505',
    });
    expect(first.audience('web', 'A')?.members).toEqual(['u1']);
    expect(await sql(url, 'SELECT id FROM deliveries')).toEqual([{ id: 'a' }]);
    expect(await sql(url, 'SELECT state FROM audiences')).toEqual([{ state: { audience: 'A', members: ['u1'] } }]);
  });

  it('keeps a settled delivery as a row with its outcome and when it was settled, for retention to remove', async () => {
    const url = await cluster().createDatabase();
    const first = store(url);
    await first.open();
    await first.accept([delivery('a'), delivery('b'), delivery('c', 1_700_000_000_123)]);
    await first.settle('a', 'delivered');
    await first.settle('b', 'failed');
    const rows = await sql<{ id: string; status: string; settled: boolean; received_at: string }>(
      url,
      'SELECT id, status, settled_at IS NOT NULL AS settled, received_at FROM deliveries ORDER BY seq',
    );
    expect(rows).toEqual([
      { id: 'a', status: 'delivered', settled: true, received_at: '1000' },
      { id: 'b', status: 'failed', settled: true, received_at: '1000' },
      { id: 'c', status: 'pending', settled: false, received_at: '1700000000123' },
    ]);
  });

  it('removes settled deliveries once keepSettledFor has passed, and keeps pending and recent ones', async () => {
    const url = await cluster().createDatabase();
    const first = new PostgresStore(url, { keepSettledFor: 300, sweepEvery: 50 });
    stores.push(first);
    await first.open();
    await first.accept([delivery('old-delivered'), delivery('old-failed'), delivery('waiting')]);
    await first.settle('old-delivered', 'delivered');
    await first.settle('old-failed', 'failed');
    const ids = async () => (await sql<{ id: string }>(url, 'SELECT id FROM deliveries ORDER BY seq')).map((row) => row.id);
    // Settled just now: kept for keepSettledFor, although sweeps run every 50 ms.
    expect(await ids()).toEqual(['old-delivered', 'old-failed', 'waiting']);

    await expect.poll(ids, { timeout: 5_000, interval: 50 }).not.toContain('old-failed');
    const left = await ids();
    expect(left).toContain('waiting');
    expect(left).not.toContain('old-delivered');
    await first.close();
  });

  it('refuses retention durations that are not integers in range, naming the option', () => {
    expect(() => new PostgresStore('postgres://u@h/db', { keepSettledFor: -1 })).toThrow(expect.objectContaining({ code: 'ERR_CONFIG', option: 'keepSettledFor' }));
    expect(() => new PostgresStore('postgres://u@h/db', { sweepEvery: 0 })).toThrow(expect.objectContaining({ option: 'sweepEvery' }));
  });

  it('says which database it cannot reach, without its password, and is not usable after', async () => {
    const unreachable = store('postgres://someone:s3cret@127.0.0.1:1/nowhere');
    const error = await unreachable.open().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ERR_STORE_CONNECT', message: expect.stringContaining('postgres://someone:***@127.0.0.1:1/nowhere') });
    expect((error as Error).message).not.toContain('s3cret');
    await expect(unreachable.accept([delivery('a')])).rejects.toMatchObject({ code: 'ERR_STORE_CLOSED' });
  });

  it('refuses a connection string that is not a PostgreSQL URL, naming the option', () => {
    for (const bad of ['mysql://u@h/db', 'localhost:5432', '']) {
      expect(() => new PostgresStore(bad)).toThrow(expect.objectContaining({ code: 'ERR_CONFIG', option: 'connectionString' }));
    }
    expect(new PostgresStore('postgresql://u@h:5432/db')).toBeInstanceOf(PostgresStore);
  });
});
