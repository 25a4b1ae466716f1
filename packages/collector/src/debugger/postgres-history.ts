import type { Client, Pool } from 'pg';
import { GroupCommit, log } from 'batched-analytics/internal';
import type { Reporter } from '../config/report.js';
import type { EventHistory, HistoryEntry } from './history.js';
import { absorb } from './views.js';
import { ChannelListener } from '../delivery/postgres/channel-listener.js';
import type { StoreDatabase } from '../delivery/store.js';

/** The channel a process tells the others on that it recorded event states. */
export const EVENTS_CHANNEL = 'batched_analytics_events';

/** How often a following process looks for new states when no notification came, in ms. */
const FOLLOW_POLL = 1_000;

/** Rows one read of new states takes at most; a full read is followed by another at once. */
const READ_BATCH = 1_000;

/**
 * How long a hole in `seq` is looked for again, in ms. Identity values are handed out in order but
 * committed in any order, so a hole is usually a row another process has not committed yet; one
 * still missing after this long was rolled back.
 */
const HOLE_WAIT = 2_000;

/** Holes looked for at most; beyond, the oldest are given up (only a page's view of them is lost). */
const MOST_HOLES = 10_000;

/** States one statement writes at most (two parameters each, of the 65,535 a statement may have). */
const WRITE_BATCH = 1_000;

/**
 * How long recorded states wait for more before they are written, in ms. Only the other processes'
 * pages see them later (this process's page is told at once), and under load it writes a few
 * large statements a second instead of one per round trip (the CHANGELOG has the measurements).
 */
const WRITE_LINGER = 200;

/**
 * States written together share one statement, which tells the followers once. Each state is a
 * parameter of its own: an array parameter would have every quote in the JSON escaped on the way.
 */
function writeStatement(count: number): string {
  const rows = Array.from({ length: count }, (_, i) => `($${2 * i + 2}, $${2 * i + 3}, $1::uuid)`).join(', ');
  return `WITH written AS (INSERT INTO events (id, entry, written_by) VALUES ${rows} RETURNING 1)
    SELECT pg_notify('${EVENTS_CHANNEL}', '') WHERE EXISTS (SELECT 1 FROM written)`;
}

/** The newest `$1` rows, oldest first. */
const NEWEST = 'SELECT entry, seq FROM (SELECT entry, seq FROM events ORDER BY seq DESC LIMIT $1) AS newest ORDER BY seq';

/** Rows after `$1` and the holes `$3` came back for: others' states whole, this process's only as a `seq`. */
const READ = `
  SELECT seq, CASE WHEN written_by = $2 THEN NULL ELSE entry END AS entry FROM events
  WHERE seq > $1 OR seq = ANY($3::bigint[])
  ORDER BY seq LIMIT ${READ_BATCH}`;

/** Keeps the newest `$1` rows: an event's latest state is always among its newest. */
const TRIM = 'DELETE FROM events WHERE seq <= (SELECT seq FROM events ORDER BY seq DESC OFFSET $1 LIMIT 1)';

/** What {@link PostgresHistory} needs of the store whose database it shares. */
export type HistoryConnection = StoreDatabase;

/**
 * The live page's history in PostgreSQL, shared by every collector on the database: each records
 * its events' states there (grouped: a state waits up to 200 ms for others, and a group is one
 * statement; best effort like the file history), and a process whose page is open follows what
 * the others record, woken by `NOTIFY` and polling every second as a backup. Each process trims
 * the table to its newest `retention` rows once it recorded that many states, so it holds at most
 * about `retention` rows per process.
 */
export class PostgresHistory implements EventHistory {
  readonly #db: HistoryConnection;
  readonly #retention: number;
  readonly #report: Reporter;
  readonly #writes: GroupCommit<HistoryEntry>;
  /** States recorded and not written yet: at most `retention`, so a stalled database cannot grow memory. */
  #waiting = 0;
  #following: Follower | undefined;
  /**
   * How far the others' states were read: by `open`, then by each follower. A page opened later
   * reads on from there, so that what was recorded while no page was open is not lost to it.
   */
  readonly #position: Position = { holes: new Map() };

  constructor(db: HistoryConnection, retention: number, report: Reporter) {
    this.#db = db;
    this.#retention = retention;
    this.#report = report;
    // A full statement's worth, or half of what may wait, is written without waiting: a lingering
    // group never makes the states recorded while it is written exceed the bound and be dropped.
    this.#writes = new GroupCommit((entries) => this.#write(entries), { linger: WRITE_LINGER, most: Math.min(WRITE_BATCH, Math.ceil(retention / 2)) });
  }

  async open(): Promise<HistoryEntry[]> {
    const { entries, seqs } = await latest(this.#db.pool(), this.#retention);
    begin(this.#position, seqs, this.#retention);
    return entries;
  }

  record(entry: HistoryEntry): void {
    if (this.#waiting >= this.#retention) {
      this.#report.warn('collector: the event history is %d states behind; not recording %s', this.#waiting, entry.view.id);
      return;
    }
    this.#waiting++;
    this.#writes
      .add(entry)
      .catch((error: unknown) => this.#report.warn('collector: could not write the event history: %s', this.#db.describe(error)))
      .finally(() => this.#waiting--);
  }

  compact(): void {
    void this.#db
      .pool()
      .query(TRIM, [this.#retention])
      .catch((error: unknown) => this.#report.warn('collector: could not trim the event history: %s', this.#db.describe(error)));
  }

  follow(backlog: number, listener: (entries: HistoryEntry[]) => void): () => void {
    const follower = new Follower(this.#db, this.#position, backlog, listener, this.#report);
    this.#following = follower;
    follower.start();
    return () => {
      if (this.#following === follower) this.#following = undefined;
      void follower.stop();
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.#writes.idle(), this.#following?.stop()]);
  }

  async #write(entries: HistoryEntry[]): Promise<void[]> {
    for (let start = 0; start < entries.length; start += WRITE_BATCH) {
      const batch = entries.slice(start, start + WRITE_BATCH);
      // Serialised now, not when recorded: a state that changed since is written as it is now.
      const values = batch.flatMap(({ view }) => [view.id, JSON.stringify({ view })]);
      await this.#db.pool().query(writeStatement(batch.length), [this.#db.writer, ...values]);
    }
    return entries.map(() => undefined);
  }
}

/** How far the states in the table were read. */
interface Position {
  /** The highest `seq` read; undefined until the history is opened or a backlog read. */
  seen?: bigint;
  /** `seq` values below `seen` not read yet, with when each was found missing. */
  readonly holes: Map<bigint, number>;
}

/**
 * One page's following of the others' states: from where the history was read up to, or without
 * that, from the newest `backlog` events on.
 */
class Follower {
  readonly #db: HistoryConnection;
  readonly #position: Position;
  readonly #backlog: number;
  readonly #listener: (entries: HistoryEntry[]) => void;
  readonly #channel: ChannelListener;
  readonly #report: Reporter;
  readonly #poll: NodeJS.Timeout;
  #reading: Promise<void> | undefined;
  #readAgain = false;
  #stopping: Promise<void> | undefined;

  constructor(db: HistoryConnection, position: Position, backlog: number, listener: (entries: HistoryEntry[]) => void, report: Reporter) {
    this.#db = db;
    this.#report = report;
    this.#position = position;
    this.#backlog = backlog;
    this.#listener = listener;
    this.#channel = new ChannelListener(() => db.connect(), EVENTS_CHANNEL, () => this.#read(), (error) => db.describe(error), report);
    this.#poll = setInterval(() => this.#read(), FOLLOW_POLL).unref();
  }

  start(): void {
    // Listening starts the first read; without it, the poll does.
    this.#channel.start().catch((error: unknown) => this.#report.warn('collector: could not listen for other collectors\' events: %s', this.#db.describe(error)));
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      clearInterval(this.#poll);
      await Promise.all([this.#channel.stop(), this.#reading]);
    })();
    return this.#stopping;
  }

  #read(): void {
    if (this.#stopping) return;
    if (this.#reading) {
      this.#readAgain = true;
      return;
    }
    this.#reading = this.#readAll()
      .catch((error: unknown) => this.#report.warn('collector: could not read other collectors\' events: %s', this.#db.describe(error)))
      .finally(() => {
        this.#reading = undefined;
        if (this.#readAgain) {
          this.#readAgain = false;
          this.#read();
        }
      });
  }

  async #readAll(): Promise<void> {
    const pool = this.#db.pool();
    const position = this.#position;
    if (position.seen === undefined) {
      const { entries, seqs } = await latest(pool, this.#backlog);
      if (this.#stopping) return;
      begin(position, seqs, this.#backlog);
      if (entries.length > 0) this.#listener(entries);
      return;
    }
    let full: boolean;
    do {
      const holes = [...position.holes.keys()].map(String);
      const { rows } = await pool.query<{ seq: string; entry: string | null }>(READ, [String(position.seen), this.#db.writer, holes]);
      if (this.#stopping) return;
      full = rows.length === READ_BATCH;
      account(position, rows.map((row) => BigInt(row.seq)));
      const entries = rows.flatMap((row) => (row.entry === null ? [] : [JSON.parse(row.entry) as HistoryEntry]));
      if (entries.length > 0) this.#listener(entries);
    } while (full);
  }
}

/** Moves past what was read, noting the holes it skipped and giving up the ones that waited long enough. */
function account(position: Position, seqs: bigint[]): void {
  const now = Date.now();
  const { holes } = position;
  for (const seq of seqs) {
    if (holes.delete(seq)) continue;
    const seen = position.seen!;
    const after = seq - seen > MOST_HOLES ? seq - BigInt(MOST_HOLES) : seen + 1n;
    for (let missing = after; missing < seq; missing++) holes.set(missing, now);
    if (seq > seen) position.seen = seq;
  }
  for (const [seq, since] of holes) {
    if (now - since < HOLE_WAIT && holes.size <= MOST_HOLES) break;
    holes.delete(seq);
  }
}

/**
 * Starts reading after the newest `limit` rows, whose `seq` values (ascending) are `seqs`, noting
 * the holes between them: rows other processes had not committed yet, to be read when they are.
 * Fewer rows than `limit` are the whole table, so the values below the first are holes too.
 */
function begin(position: Position, seqs: bigint[], limit: number): void {
  position.seen = seqs.length < limit ? 0n : seqs[0]! - 1n;
  account(position, seqs);
}

/**
 * The state of each event among the newest `limit` rows, by the order the events last changed in,
 * and the `seq` of those rows. An event's states are taken in as the live page takes in others'
 * ({@link absorb}): the highest `seq` is not always the further state, since processes write
 * concurrently, and a process that claimed an event it had not seen arrive records it as a replay.
 */
async function latest(pool: Pool, limit: number): Promise<{ entries: HistoryEntry[]; seqs: bigint[] }> {
  const { rows } = await pool.query<{ entry: string; seq: string }>(NEWEST, [limit]);
  const events = new Map<string, HistoryEntry>();
  for (const row of rows) {
    const entry = JSON.parse(row.entry) as HistoryEntry;
    const kept = events.get(entry.view.id);
    if (kept !== undefined) {
      absorb(kept.view, entry.view);
      events.delete(entry.view.id);
    }
    events.set(entry.view.id, kept ?? entry);
  }
  return { entries: [...events.values()], seqs: rows.map((row) => BigInt(row.seq)) };
}
