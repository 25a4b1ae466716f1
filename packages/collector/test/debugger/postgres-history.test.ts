// The live page's history in PostgreSQL, shared by the collectors on one database: what one
// records, another opens and follows, in the order of commit, holes in `seq` included.
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventView } from '../../src/debugger/views.js';
import type { EventHistory, HistoryEntry } from '../../src/debugger/history.js';
import { PostgresHistory } from '../../src/debugger/postgres-history.js';
import { PostgresStore } from '../../src/delivery/postgres/store.js';
import { Reporter } from '../../src/config/report.js';
import { recordingLogger } from '../observe/recording-logger.js';
import { waitFor } from '../../../../test/helpers/collector.js';
import { POSTGRES_SKIP, sql, useThrowawayCluster } from '../../../../test/helpers/postgres.js';

const cluster = useThrowawayCluster();

function entry(id: string, status: EventView['status'] = 'delivered', attempts = 1): HistoryEntry {
  const view: EventView = {
    id,
    receivedAt: new Date(0).toISOString(),
    source: 'web',
    origin: 'api',
    message: { type: 'track', event: id },
    routes: [{ destination: 'Webhooks', forwarded: true }],
    status,
    webhooks: [{ url: 'http://127.0.0.1:9/in', status: status === 'delivered' ? 'delivered' : 'retrying', attempts }],
  };
  return { view };
}

/**
 * Runs `query` until `done` says its rows are what the test waits for, and returns them.
 * @throws with the last rows after 10 s.
 */
async function rowsOf(url: string, query: string, done: (rows: { id: string }[]) => boolean): Promise<{ id: string }[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = await sql<{ id: string }>(url, query);
    if (done(rows)) return rows;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for the rows of ${query}; the last were ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Writes the state of `early` in a transaction left open while `during` runs, and the state of
 * `late` committed before it: a seq taken before another's, committed after it.
 */
async function committedOutOfOrder(url: string, during: () => Promise<void>): Promise<void> {
  const slow = new pg.Client({ connectionString: url });
  await slow.connect();
  try {
    await slow.query('BEGIN');
    const insert = `INSERT INTO events (id, entry, written_by) VALUES ($1, $2, gen_random_uuid())`;
    await slow.query(insert, ['early', JSON.stringify(entry('early'))]);
    await sql(url, insert, ['late', JSON.stringify(entry('late'))]);
    await during();
    await slow.query('COMMIT');
  } finally {
    await slow.end();
  }
}

describe.skipIf(POSTGRES_SKIP !== undefined)(`PostgresHistory${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`, () => {
  const opened: { store: PostgresStore; history: EventHistory }[] = [];
  afterEach(async () => {
    for (const { store, history } of opened.splice(0)) {
      await history.close();
      await store.close();
    }
  });

  async function open(url: string, retention = 100): Promise<EventHistory> {
    const store = new PostgresStore(url);
    await store.open();
    const history = new PostgresHistory(store.database(), retention, new Reporter(recordingLogger()));
    opened.push({ store, history });
    return history;
  }

  /** Follows `history` and collects what it hands over. */
  function follow(history: EventHistory, backlog = 100) {
    const got: HistoryEntry[] = [];
    const stop = history.follow!(backlog, (entries) => got.push(...entries));
    return { ids: () => got.map((e) => e.view.id), stop };
  }

  it('opens the latest state of each event any collector recorded, oldest first, with the webhook sent', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = [await open(url), await open(url)];
    a.record(entry('one', 'retrying'));
    b.record(entry('two'));
    await Promise.all([a.close(), b.close()]);
    a.record(entry('one', 'delivered', 2));
    await a.close();

    const entries = await (await open(url)).open();
    expect(entries.map((e) => [e.view.id, e.view.status, e.view.webhooks[0]!.attempts])).toEqual([
      ['two', 'delivered', 1],
      ['one', 'delivered', 2],
    ]);
  });

  it("hands a follower the backlog, then what the others record (never its own), woken at once", async () => {
    const url = await cluster().createDatabase();
    const [a, b, c] = [await open(url), await open(url), await open(url)];
    a.record(entry('before'));
    await a.close();

    // The follower's backup poll (every second, on setInterval) never fires here: what it is
    // handed after the backlog, the NOTIFY woke it for. (pg and the waits use setTimeout.)
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const seen = follow(b);
      const control = follow(c);
      await waitFor(() => seen.ids().includes('before'), 'the backlog');
      b.record(entry('own'));
      await rowsOf(url, "SELECT id FROM events WHERE id = 'own'", (rows) => rows.length === 1);
      a.record(entry('after'));
      // It read past its own state on the way.
      await waitFor(() => seen.ids().includes('after'), 'the new state', 10_000);
      expect(seen.ids()).toEqual(['before', 'after']);

      seen.stop();
      a.record(entry('unfollowed'));
      await a.close();
      // A follower still following is handed it: by then the stopped one would have been too.
      await waitFor(() => control.ids().includes('unfollowed'), 'the state after stop() at another follower', 10_000);
      expect(seen.ids()).not.toContain('unfollowed');
      control.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('hands over a state committed after a later one (its seq was a hole the follower came back for)', async () => {
    const url = await cluster().createDatabase();
    const b = await open(url);
    b.record(entry('first'));
    await b.close();
    const seen = follow(await open(url));
    await waitFor(() => seen.ids().includes('first'), 'the backlog');

    await committedOutOfOrder(url, async () => {
      await sql(url, 'NOTIFY batched_analytics_events');
      await waitFor(() => seen.ids().includes('late'), 'the later state');
    });
    await waitFor(() => seen.ids().includes('early'), 'the state committed last', 1_900);
    expect(seen.ids()).toEqual(['first', 'late', 'early']);
  });

  it('hands a page opened after many states were recorded every state since the history was opened, beyond the backlog', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = [await open(url), await open(url)];
    await b.open();
    for (let n = 0; n < 30; n++) a.record(entry(`e${n}`));
    await a.close();
    // A backlog of 5: only the newest 5 would be handed over without knowing where `open` ended.
    const seen = follow(b, 5);
    await waitFor(() => seen.ids().length === 30, 'every state since open', 3_000);
    seen.stop();
    // Followed again later: only what came since.
    a.record(entry('later'));
    await a.close();
    const again = follow(b, 5);
    await waitFor(() => again.ids().includes('later'), 'the later state', 3_000);
    expect(again.ids()).toEqual(['later']);
  });

  it('opens the further state of an event, not the last written, and how it arrived from the process that accepted it', async () => {
    const url = await cluster().createDatabase();
    const [a, b] = [await open(url), await open(url)];
    // b claimed and delivered what a accepted; a's retrying state of it was written after.
    b.record({ ...entry('one', 'delivered', 2), view: { ...entry('one', 'delivered', 2).view, origin: 'replay' } });
    await b.close();
    a.record(entry('one', 'retrying', 1));
    await a.close();

    const [opened] = await (await open(url)).open();
    expect(opened!.view).toMatchObject({ origin: 'api', status: 'delivered', webhooks: [{ status: 'delivered', attempts: 2 }] });
  });

  it('hands a page a state committed after the history was opened, though a later one was committed before', async () => {
    const url = await cluster().createDatabase();
    const history = await open(url);
    await committedOutOfOrder(url, async () => {
      expect((await history.open()).map((e) => e.view.id)).toEqual(['late']);
    });
    const seen = follow(history);
    await waitFor(() => seen.ids().includes('early'), 'the state committed last', 1_900);
  });

  it('holds at most `retention` states while the database does not take them, and drops the rest', async () => {
    const url = await cluster().createDatabase();
    const history = await open(url, 5);
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
      for (let n = 1; n <= 20; n++) history.record(entry(`e${n}`));
      await blocker.query('COMMIT');
    } finally {
      await blocker.end();
    }
    await history.close();
    expect((await sql<{ id: string }>(url, 'SELECT id FROM events ORDER BY seq')).map((row) => row.id)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5']);
  });

  it('trims the table to the newest `retention` rows when compacted', async () => {
    const url = await cluster().createDatabase();
    const history = await open(url, 3);
    // Written one by one: at most 3 states wait to be written at once.
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      history.record(entry(id));
      await history.close();
    }
    history.compact();
    const rows = await rowsOf(url, 'SELECT id FROM events ORDER BY seq', (rows) => rows.length <= 3);
    expect(rows.map((row) => row.id)).toEqual(['c', 'd', 'e']);
  });
});
