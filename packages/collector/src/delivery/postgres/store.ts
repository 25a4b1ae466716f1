import { hostname } from 'node:os';
import type { Client, ClientConfig, Pool, PoolClient } from 'pg';
import { AnalyticsError, type AudienceState, GroupCommit, InProgress, integer, log, type WebhookType } from 'batched-analytics/internal';
import { type CollectorLogger, Reporter } from '../../config/report.js';
import { type Arrival, type AttemptRecord, type AudiencePlan, type Backlog, type Claimed, claimOf, type ClaimOptions, type Delivery, type DeliveryRecord, type DeliveryState, type Ingested, type Outcome, type Recovered, type RecoverQuery, type Store, type StoreDatabase, type StoreSnapshot } from '../store.js';
import { StoreClosedError, StoreConnectError } from '../errors.js';
import { DEDUPE_DEFAULTS, RETENTION_DEFAULTS } from '../../config/config.js';
import { postgresUrl, redact } from '../../config/connection-string.js';
import { Sweeper } from './retention.js';
import { migrate } from './schema.js';
import { ChannelListener } from './channel-listener.js';
import { describeFailure, unavailableOr } from './failure.js';
import { Sockets } from './sockets.js';
import { connectionConfig, POSTGRES_TIMEOUTS, type PostgresTimeouts } from '../../config/postgres-timeouts.js';
import { transaction } from './transaction.js';
import { PostgresUrlStates } from './url-states.js';
import type { UrlState, UrlStateChange } from '../url-states.js';
import { sourceKey } from '../source-key.js';

/** The channel processes tell each other on that deliveries are due now (accepted unclaimed, or released). */
export const WORK_CHANNEL = 'batched_analytics_work';

/** Turns a parameter or column of milliseconds into an interval. */
const MS = `* interval '1 millisecond'`;

/**
 * One statement per acceptance, whatever the number of deliveries: they travel as one JSON array
 * (one parameter, so a 20,000-member audience sync fits as well as one message; serialised by
 * `JSON.stringify` rather than quoted element by element as array literals) and are inserted in
 * order, so `seq` follows the order of acceptance. The first `$4` rows are
 * claimed for the accepting process as they are inserted (it delivers them at once: no claim
 * statement for them); when any are left unclaimed, the other processes are told.
 */
const INSERT_DELIVERIES = `
  WITH inserted AS (
    INSERT INTO deliveries (id, source, message, message_id, type, body, received_at, targets, accepted_by, attempts, claim_id, claimed_by, lease_until, next_attempt_at)
    SELECT id, source, message::json, message_id, type, body, received_at, targets, $6::uuid,
      CASE WHEN n <= $4 THEN 1 ELSE 0 END,
      CASE WHEN n <= $4 THEN $2::uuid END,
      CASE WHEN n <= $4 THEN $3 END,
      CASE WHEN n <= $4 THEN now() + $5::integer ${MS} END,
      CASE WHEN n <= $4 THEN now() + $5::integer ${MS} ELSE now() END
    FROM ROWS FROM (json_to_recordset($1::json) AS (id text, source text, message text, message_id text, type text, body text, received_at bigint, targets smallint[]))
      WITH ORDINALITY AS d(id, source, message, message_id, type, body, received_at, targets, n)
    ORDER BY n
    RETURNING 1
  )
  SELECT pg_notify('${WORK_CHANNEL}', '') WHERE (SELECT count(*) FROM inserted) > $4`;

/**
 * Claims the due rows, oldest due first (`batched_analytics_due`, see the schema), skipping rows
 * another transaction is claiming right now (`SKIP LOCKED`: concurrent claimers never wait for or
 * share a row). The lease's end becomes the row's `next_attempt_at`, so a claim that lapses makes
 * the row due again by itself; `due.n` keeps the order they came due in; `$5`, this store's id, tells
 * its own rows.
 */
const CLAIM = `
  UPDATE deliveries AS d
  SET claim_id = $1, claimed_by = $2, attempts = d.attempts + 1, lease_until = now() + $3::integer ${MS}, next_attempt_at = now() + $3::integer ${MS}
  FROM unnest(ARRAY(SELECT batched_analytics_due($4))) WITH ORDINALITY AS due(id, n)
  WHERE d.id = due.id
  RETURNING d.id, d.source, d.message, d.message_id, d.type, d.body, d.received_at, d.attempts, d.targets, d.accepted_by = $5::uuid AS accepted_here, due.n`;

/**
 * Rows still held by their claims: `$1` ids, `$2` claim ids (a row has a claim id only while it is
 * pending and claimed). Looked up by primary key: with a condition on `status`, the planner (its
 * statistics lagging behind a queue table that fills and drains in seconds) took the partial index
 * of pending rows and hashed every one of them for each statement instead.
 */
const HELD = `d.id = ANY($1::text[]) AND d.id = h.id AND d.claim_id = h.claim`;

const RENEW = `
  UPDATE deliveries AS d SET lease_until = now() + $3::integer ${MS}, next_attempt_at = now() + $3::integer ${MS}
  FROM unnest($1::text[], $2::uuid[]) AS h(id, claim)
  WHERE ${HELD}
  RETURNING d.id, d.claim_id`;

/** Retries that arrive together share one statement; a row's targets (and those it waits for) travel as array literals. */
const RETRY = `
  UPDATE deliveries AS d
  SET next_attempt_at = now() + h.delay ${MS}, targets = h.targets::smallint[], waiting_for = h.waiting::smallint[], claim_id = NULL, lease_until = NULL, attempt_log = d.attempt_log || h.log::jsonb
  FROM unnest($1::text[], $2::uuid[], $3::double precision[], $4::text[], $5::text[], $6::text[]) AS h(id, claim, delay, targets, log, waiting)
  WHERE ${HELD}
  RETURNING d.id`;

/** Settlements that arrive together share one statement; with no retention they delete their rows (the attempts go with them). */
const SETTLE = `
  DELETE FROM deliveries AS d
  USING unnest($1::text[], $2::uuid[], $3::text[], $4::text[]) AS h(id, claim, outcome, log)
  WHERE ${HELD}
  RETURNING d.id`;

/** With `keepSettledFor`: the row stays with its outcome and attempts, for the retention sweep to remove. */
const SETTLE_AND_KEEP = `
  UPDATE deliveries AS d SET status = h.outcome, settled_at = now(), claim_id = NULL, lease_until = NULL, attempt_log = d.attempt_log || h.log::jsonb
  FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[]) AS h(id, claim, outcome, log)
  WHERE ${HELD}
  RETURNING d.id`;

const RELEASE = `
  WITH released AS (
    UPDATE deliveries AS d SET next_attempt_at = now(), attempts = d.attempts - 1, claim_id = NULL, lease_until = NULL
    FROM unnest($1::text[], $2::uuid[]) AS h(id, claim)
    WHERE ${HELD}
    RETURNING 1
  )
  SELECT pg_notify('${WORK_CHANNEL}', '') WHERE EXISTS (SELECT 1 FROM released)`;

/** Retries of a source waiting for webhook `$2` become due now. */
const HASTEN = `
  WITH hastened AS (
    UPDATE deliveries SET next_attempt_at = now()
    WHERE status = 'pending' AND next_attempt_at > now() AND claim_id IS NULL AND source = $1 AND $2 = ANY (waiting_for)
    RETURNING 1
  )
  SELECT count(*)::integer AS hastened, pg_notify('${WORK_CHANNEL}', '') FROM hastened HAVING count(*) > 0`;

/** A delivery's record: `$1` names the column looked at (by `message_id` or `id`). */
const RECORDS = (column: 'message_id' | 'id') => `
  SELECT id, source, message, message_id, type, body, received_at, status, attempt_log,
    (extract(epoch FROM settled_at) * 1000)::float8 AS settled_at
  FROM deliveries WHERE ${column} = $1 ORDER BY seq`;
const LOOKUP = RECORDS('message_id');
const FIND = RECORDS('id');

/**
 * The deliveries of source `$1` given up within [`$2`, `$3`) (ms since the epoch) that no recovery
 * sent again, oldest first, `$4` at most, locked for the recovery's transaction: a concurrent
 * recovery in another process skips them rather than sending them too.
 */
const GIVEN_UP = `
  SELECT id, source, message, message_id, type, body, received_at, status, attempt_log,
    (extract(epoch FROM settled_at) * 1000)::float8 AS settled_at
  FROM deliveries
  WHERE source = $1 AND status = 'failed' AND recovered_by IS NULL
    AND settled_at >= to_timestamp($2::float8 / 1000) AND settled_at < to_timestamp($3::float8 / 1000)
  ORDER BY settled_at, seq LIMIT $4 FOR UPDATE SKIP LOCKED`;

/** Marks the originals (`$1`) with the deliveries that sent them again (`$2`). */
const MARK_RECOVERED = `
  UPDATE deliveries AS d SET recovered_by = r.by
  FROM unnest($1::text[], $2::text[]) AS r(id, by)
  WHERE d.id = r.id`;

/** Rows one recovery transaction reads at most: a long outage is recovered in several. */
const RECOVER_BATCH = 1_000;

const PENDING = `SELECT count(*)::integer AS pending FROM deliveries WHERE status = 'pending'`;
/** Read from the partial index of pending rows; `received_at` is the webhook's `receivedAt`. */
const BACKLOG = `SELECT count(*)::integer AS pending, min(received_at)::float8 AS oldest_at FROM deliveries WHERE status = 'pending'`;

/**
 * Claims the message ids of an acceptance (`$1`: a JSON array of distinct `[source, messageId]`,
 * sorted, so that two acceptances sharing ids lock them in one order and never deadlock), accepted
 * at `$2`: a row older than `$3` (out of the window, not yet swept) is taken over.
 * @returns the ids claimed; the others are repeats.
 */
const CLAIM_IDS = `
  INSERT INTO message_ids AS m (source, message_id, accepted_at)
  SELECT a->>0, a->>1, $2 FROM json_array_elements($1::json) WITH ORDINALITY AS t(a, n) ORDER BY n
  ON CONFLICT (source, message_id) DO UPDATE SET accepted_at = excluded.accepted_at WHERE m.accepted_at < $3
  RETURNING m.source, m.message_id`;

/** When the repeats among `$1` (as in CLAIM_IDS) were first accepted. */
const FIRST_ACCEPTED = `
  SELECT m.source, m.message_id, m.accepted_at::float8 AS accepted_at
  FROM message_ids AS m JOIN json_array_elements($1::json) AS t(a) ON m.source = a->>0 AND m.message_id = a->>1`;

/** Serialises the syncs of one audience across processes, for the length of the transaction. */
const LOCK_AUDIENCE = 'SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))';
const READ_AUDIENCE = 'SELECT state FROM audiences WHERE source = $1 AND name = $2';
const WRITE_AUDIENCE = `
  INSERT INTO audiences (source, name, state) VALUES ($1, $2, $3::json)
  ON CONFLICT (source, name) DO UPDATE SET state = excluded.state, updated_at = now()`;

/**
 * How long a settlement waits for others before it is written, in ms. Nobody waits on it but the
 * slot its claim holds (and the claims beyond a quarter of `maxInFlight` wait anyway); a crash
 * meanwhile only repeats the deliveries. Larger statements cost the database less per row.
 */
const SETTLE_LINGER = 20;

/**
 * Settlements waiting that end the wait: they are written at once. It ends a wait, it does not
 * split a group: what arrived while the previous statement ran goes in one (`unnest` takes any
 * number of rows in its three parameters).
 */
const SETTLE_MOST = 1_000;

/** Options of {@link PostgresStore}. Durations in ms; the timeouts' defaults are {@link POSTGRES_TIMEOUTS}. */
export interface PostgresStoreOptions extends Partial<PostgresTimeouts> {
  /**
   * How long a settled delivery stays in `deliveries`, with its outcome (to look up what was sent,
   * and when), before the retention sweep removes it. `0`: its row is deleted as it settles, which
   * costs the database about a fifth less per delivery than keeping it (no new row version, no
   * index entries, no sweep).
   * @default 86400000 (24 h)
   */
  keepSettledFor?: number;
  /**
   * How often the retention sweep runs, when `keepSettledFor` keeps settled rows.
   * @default 60000 (1 min)
   */
  sweepEvery?: number;
  /**
   * How long, in ms, a source's `messageId` is remembered for {@link PostgresStore.ingest} (rows of
   * `message_ids`, removed by the sweep once older). 0: off.
   * @default 86400000 (24 h)
   */
  dedupeWindow?: number;
  /**
   * Where the store's warnings go (a lost connection, a failed sweep), rate-limited.
   * @default one human line each on stderr
   */
  logger?: CollectorLogger;
}

export const POSTGRES_DEFAULTS = { keepSettledFor: RETENTION_DEFAULTS.keepFor, sweepEvery: 60_000, dedupeWindow: DEDUPE_DEFAULTS.window } as const;

interface DeliveryRow {
  id: string;
  source: string;
  message: Delivery['message'];
  message_id: string;
  type: WebhookType;
  body: string;
  /** node-postgres returns a bigint as a string: it may exceed 2^53, ours never does. */
  received_at: string;
  attempts: number;
  targets: number[] | null;
  /** Whether this store accepted it (`accepted_by`, its `events.written_by` id); null for rows from before schema version 7. */
  accepted_here: boolean | null;
  /** Its place in the order the claimed rows came due (a bigint, as a string). */
  n: string;
}

/** A claim call, as the statements that carry it in groups take it. */
type Held = [id: string, claim: string];

/**
 * A {@link Store} in PostgreSQL (node-postgres, loaded when the store opens, so that nothing else
 * in the package loads it), shared by any number of collector processes. Every acceptance is one
 * statement, committed before it resolves, and claims its deliveries for the accepting process as
 * far as it has room; claims, retries and settlements name their claim, so a process whose lease
 * lapsed (killed, frozen) cannot settle what another took over. Retries, renewals and settlements
 * that arrive together share one statement each. Processes wake each other with `NOTIFY` when work
 * is due now; polling backs it up.
 */
export class PostgresStore implements Store {
  readonly #connectionString: string;
  /** Who claims, as `claimed_by` shows it: host and process. */
  readonly #claimant = `${hostname()}:${process.pid}`;
  /** This store in `events.written_by` and `deliveries.accepted_by`: unlike host and pid, never shared with another process. */
  readonly #writer = crypto.randomUUID();
  /** node-postgres, once the store opened. */
  #pg: typeof import('pg').default | undefined;
  #pool: Pool | undefined;
  #listener: ChannelListener | undefined;
  readonly #retention: { keepSettledFor: number; dedupeWindow: number; every: number };
  readonly #timeouts: PostgresTimeouts;
  readonly #sockets = new Sockets();
  readonly #report: Reporter;
  #sweeper: Sweeper | undefined;
  #closing: Promise<void> | undefined;
  /** Statements in progress, which close() lets finish. */
  readonly #running = new InProgress();
  readonly #retries = new GroupCommit<[...Held, delay: number, targets: string, log: string, waitingFor: string], boolean>((items) => this.#grouped(RETRY, items));
  readonly #settles = new GroupCommit<[...Held, outcome: Outcome, log: string], boolean>(
    (items) => this.#grouped(this.#retention.keepSettledFor > 0 ? SETTLE_AND_KEEP : SETTLE, items),
    { linger: SETTLE_LINGER, most: SETTLE_MOST },
  );
  readonly #workListeners = new Set<() => void>();

  /**
   * @param connectionString `postgres://USER[:PASSWORD]@HOST:PORT/DB` (or `postgresql://`), with any
   * parameters node-postgres reads (`?sslmode=require`, `?host=/run/postgresql`).
   * @throws {ConfigError} naming `connectionString` when it is not such a URL, or the option that is not
   * a valid duration.
   */
  constructor(connectionString: string, options: PostgresStoreOptions = {}) {
    this.#connectionString = postgresUrl('connectionString', connectionString);
    this.#retention = {
      keepSettledFor: integer('keepSettledFor', options.keepSettledFor ?? POSTGRES_DEFAULTS.keepSettledFor, 0),
      dedupeWindow: integer('dedupeWindow', options.dedupeWindow ?? POSTGRES_DEFAULTS.dedupeWindow, 0),
      every: integer('sweepEvery', options.sweepEvery ?? POSTGRES_DEFAULTS.sweepEvery, 1),
    };
    const timeouts = { ...POSTGRES_TIMEOUTS };
    for (const key of Object.keys(timeouts) as (keyof PostgresTimeouts)[]) timeouts[key] = integer(key, options[key] ?? timeouts[key], 1);
    this.#timeouts = timeouts;
    this.#report = new Reporter(options.logger);
  }

  /**
   * Connects, brings the schema up to date and starts listening for work.
   * @throws {StoreConnectError} when the database cannot be reached or read (within
   * the timeouts: a server that never answers fails it after `connectTimeout`);
   * `ERR_SCHEMA_VERSION` when a newer collector migrated it.
   */
  async open(): Promise<StoreSnapshot> {
    if (this.#closing) throw new StoreClosedError();
    const { default: pg } = await import('pg');
    this.#pg = pg;
    const pool = new pg.Pool(this.#connectionConfig());
    // An idle connection that breaks (a server restart) is replaced by the next query; unheard,
    // the pool's error event would end the process.
    pool.on('error', (error) => this.#report.warn('collector: a PostgreSQL connection was lost: %s', this.#describe(error)));
    this.#pool = pool;
    try {
      await migrate(pool);
      const { rows } = await pool.query<{ pending: number }>(PENDING);
      this.#listener = new ChannelListener(
        () => this.#connect(),
        WORK_CHANNEL,
        () => {
          for (const listener of this.#workListeners) listener();
        },
        (error) => this.#describe(error),
        this.#report,
      );
      await this.#listener.start();
      this.#sweeper = new Sweeper(pool, { ...this.#retention, describe: (error) => this.#describe(error), report: this.#report });
      log('collector: PostgreSQL store opened: %d pending', rows[0]!.pending);
      return { pending: rows[0]!.pending };
    } catch (error) {
      // Its idle connections would keep the process alive: the caller does not close a store that did not open.
      this.#pool = undefined;
      await this.#disconnect(pool);
      if (error instanceof AnalyticsError) throw error;
      throw new StoreConnectError(`Cannot open the PostgreSQL store ${redact(this.#connectionString)}: ${this.#describe(error)}`, { cause: error });
    }
  }

  async ping(): Promise<void> {
    await this.#run((pool) => pool.query('SELECT 1'));
  }

  accept(deliveries: readonly Delivery[], options?: ClaimOptions): Promise<Claimed[]> {
    return this.#run((pool) => this.#insert(pool, deliveries, options));
  }

  /** The ids and the deliveries of the arrivals that are not repeats are inserted in one transaction. */
  ingest(arrivals: readonly Arrival[], options?: ClaimOptions): Promise<Ingested> {
    const window = this.#retention.dedupeWindow;
    if (window === 0) return this.accept(arrivals.flatMap(({ delivery }) => delivery ?? []), options).then((claimed) => ({ claimed, repeats: arrivals.map(() => undefined) }));
    return this.#run((pool) =>
      transaction(pool, async (client) => {
        const at = Date.now();
        // Each id once, the first arrival carrying it: the later ones in the same call are repeats of it.
        const keyOf = arrivals.map(({ source, messageId }) => sourceKey(source, messageId));
        const firstOf = new Map<string, number>();
        keyOf.forEach((key, index) => {
          if (!firstOf.has(key)) firstOf.set(key, index);
        });
        // Sorted by key, as [source, messageId] pairs read from the arrivals themselves.
        const keys = JSON.stringify(
          [...firstOf]
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([, index]) => [arrivals[index]!.source, arrivals[index]!.messageId]),
        );
        const { rows } = await client.query<{ source: string; message_id: string }>(CLAIM_IDS, [keys, at, at - window + 1]);
        const claimedIds = new Set(rows.map((row) => sourceKey(row.source, row.message_id)));
        const firstAt = new Map<string, number>();
        if (claimedIds.size < firstOf.size) {
          const earlier = await client.query<{ source: string; message_id: string; accepted_at: number }>(FIRST_ACCEPTED, [keys]);
          for (const row of earlier.rows) firstAt.set(sourceKey(row.source, row.message_id), row.accepted_at);
        }
        const repeats = keyOf.map((key, index) => {
          if (firstOf.get(key) !== index) return claimedIds.has(key) ? at : (firstAt.get(key) ?? at);
          return claimedIds.has(key) ? undefined : (firstAt.get(key) ?? at);
        });
        const deliveries = arrivals.flatMap(({ delivery }, index) => (delivery === undefined || repeats[index] !== undefined ? [] : [delivery]));
        return { claimed: await this.#insert(client, deliveries, options), repeats };
      }),
    );
  }

  syncAudience<P extends AudiencePlan>(
    source: string,
    name: string,
    plan: (previous: AudienceState | undefined) => P,
    options?: ClaimOptions,
  ): Promise<{ plan: P; claimed: Claimed[] }> {
    return this.#run((pool) =>
      transaction(pool, async (client) => {
        await client.query(LOCK_AUDIENCE, [source, name]);
        const { rows } = await client.query<{ state: AudienceState }>(READ_AUDIENCE, [source, name]);
        const planned = plan(rows[0]?.state);
        const claimed = await this.#insert(client, planned.deliveries, options);
        await client.query(WRITE_AUDIENCE, [source, name, JSON.stringify(planned.state)]);
        return { plan: planned, claimed };
      }),
    );
  }

  backlog(): Promise<Backlog> {
    return this.#run(async (pool) => {
      const { rows } = await pool.query<{ pending: number; oldest_at: number | null }>(BACKLOG);
      return { pending: rows[0]!.pending, oldestAt: rows[0]!.oldest_at ?? undefined };
    });
  }

  claim(limit: number, lease: number): Promise<Claimed[]> {
    return this.#run(async (pool) => {
      const claim = crypto.randomUUID();
      const { rows } = await pool.query<DeliveryRow>(CLAIM, [claim, this.#claimant, lease, limit, this.#writer]);
      return rows.sort((a, b) => Number(a.n) - Number(b.n)).map((row) => toClaimed(row, claim, row.accepted_here === true));
    });
  }

  renew(held: readonly Claimed[], lease: number): Promise<Claimed[]> {
    return this.#run(async (pool) => {
      if (held.length === 0) return [];
      const { rows } = await pool.query<{ id: string; claim_id: string }>(RENEW, [held.map((h) => h.delivery.id), held.map((h) => h.claim), lease]);
      const kept = new Set(rows.map((row) => `${row.id} ${row.claim_id}`));
      return held.filter((h) => !kept.has(`${h.delivery.id} ${h.claim}`));
    });
  }

  async retry(held: Claimed, delay: number, targets: readonly number[], attempts: readonly AttemptRecord[] = [], waitingFor: readonly number[] = []): Promise<boolean> {
    this.#usable();
    return this.#retries.add([held.delivery.id, held.claim, Math.round(delay), arrayLiteral(targets), JSON.stringify(attempts), arrayLiteral(waitingFor)]).catch((error: unknown) => {
      throw unavailableOr(error, this.#timeouts);
    });
  }

  async settle(held: Claimed, outcome: Outcome, attempts: readonly AttemptRecord[] = []): Promise<boolean> {
    this.#usable();
    return this.#settles.add([held.delivery.id, held.claim, outcome, JSON.stringify(attempts)]).catch((error: unknown) => {
      throw unavailableOr(error, this.#timeouts);
    });
  }

  lookup(messageId: string): Promise<DeliveryRecord[]> {
    return this.#run(async (pool) => (await pool.query<RecordRow>(LOOKUP, [messageId])).rows.map(toRecord));
  }

  find(id: string): Promise<DeliveryRecord | undefined> {
    return this.#run(async (pool) => (await pool.query<RecordRow>(FIND, [id])).rows.map(toRecord)[0]);
  }

  /**
   * In transactions of up to 1,000 deliveries each: the originals are locked as they are read,
   * their redeliveries inserted and the originals marked in the same transaction.
   */
  async recover(query: RecoverQuery, redeliver: (record: DeliveryRecord) => Delivery | undefined, options?: ClaimOptions): Promise<Recovered> {
    const claimed: Claimed[] = [];
    const recorded: Delivery[] = [];
    // Rows a batch read and left alone (redeliver declined them): the next batch starts after them.
    let skipped = 0;
    for (;;) {
      const batch = await this.#run((pool) =>
        transaction(pool, async (client) => {
          const { rows } = await client.query<RecordRow>(GIVEN_UP, [query.source, query.since, query.until, RECOVER_BATCH + skipped]);
          const originals: string[] = [];
          const made: Delivery[] = [];
          for (const row of rows.slice(skipped)) {
            const delivery = redeliver(toRecord(row));
            if (delivery === undefined) continue;
            originals.push(row.id);
            made.push(delivery);
          }
          const room = Math.max(0, (options?.claim ?? 0) - claimed.length);
          const taken = await this.#insert(client, made, options === undefined ? undefined : { ...options, claim: room });
          if (made.length > 0) await client.query(MARK_RECOVERED, [originals, made.map(({ id }) => id)]);
          return { read: rows.length - skipped, taken, made };
        }),
      );
      claimed.push(...batch.taken);
      recorded.push(...batch.made);
      skipped += batch.read - batch.made.length;
      if (batch.read < RECOVER_BATCH) return { claimed, recorded };
    }
  }

  hasten(source: string, target: number): Promise<number> {
    return this.#run(async (pool) => (await pool.query<{ hastened: number }>(HASTEN, [source, target])).rows[0]?.hastened ?? 0);
  }

  release(held: readonly Claimed[]): Promise<void> {
    return this.#run(async (pool) => {
      if (held.length > 0) await pool.query(RELEASE, [held.map((h) => h.delivery.id), held.map((h) => h.claim)]);
    });
  }

  onWork(listener: () => void): () => void {
    this.#workListeners.add(listener);
    return () => this.#workListeners.delete(listener);
  }

  database(): StoreDatabase {
    return { pool: () => this.#usable(), connect: () => this.#connect(), writer: this.#writer, describe: (error) => this.#describe(error) };
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled([this.#running.settled(), this.#settles.idle(), this.#retries.idle(), this.#sweeper?.stop()]);
      await this.#disconnect(this.#pool);
    })();
    return this.#closing;
  }

  async #insert(db: Pool | PoolClient, deliveries: readonly Delivery[], options: ClaimOptions | undefined): Promise<Claimed[]> {
    if (deliveries.length === 0) return [];
    const claim = crypto.randomUUID();
    const claiming = Math.min(deliveries.length, Math.max(0, options?.claim ?? 0));
    const rows = deliveries.map(({ id, source, message, webhook, targets }) => ({
      id,
      source,
      // As text: a JSON string escape a message may hold (\u0000, a lone surrogate) is kept as
      // written, where reading it as a json field of the array would decode it, and fail.
      message: JSON.stringify(message),
      message_id: webhook.messageId,
      type: webhook.type,
      body: webhook.body,
      received_at: webhook.receivedAt,
      targets: targets ?? null,
    }));
    await db.query(INSERT_DELIVERIES, [JSON.stringify(rows), claim, this.#claimant, claiming, options?.lease ?? 0, this.#writer]);
    return deliveries.slice(0, claiming).map((delivery) => claimOf(delivery, claim, 1, true, delivery.targets));
  }

  /** One statement over grouped claim calls: each learns whether its claim still held. */
  async #grouped(statement: string, items: (readonly [string, string, ...unknown[]])[]): Promise<boolean[]> {
    const columns = items[0]!.map((_, column) => items.map((item) => item[column]));
    const { rows } = await this.#pool!.query<{ id: string }>(statement, columns);
    const applied = new Set(rows.map((row) => row.id));
    return items.map(([id]) => applied.has(id));
  }

  /**
   * Ends the listening connection and the pool's. The server has a round trip's worth (`queryTimeout`)
   * to close them; then every connection still open is cut (the history's too).
   */
  #disconnect(pool: Pool | undefined): Promise<void> {
    return this.#sockets.closeWithin(Promise.allSettled([this.#listener?.stop(), pool?.end()]), this.#timeouts.queryTimeout);
  }

  /** A connection of its own, outside the pool (for LISTEN), with the pool's timeouts. */
  #connect(): Client {
    return new this.#pg!.Client(this.#connectionConfig());
  }

  /** Every connection's: its timeouts, and a socket `close()` can cut. */
  #connectionConfig(): ClientConfig {
    return { ...connectionConfig(this.#connectionString, this.#timeouts), stream: this.#sockets.open };
  }

  /** One line on a database failure, for reports: a timeout names its config entry. */
  #describe(error: unknown): string {
    return describeFailure(error, this.#timeouts);
  }

  /**
   * Runs a statement while the store is open; close() waits for it. A database that cannot do it
   * now makes it reject with `StoreUnavailableError`.
   */
  async #run<T>(work: (pool: Pool) => Promise<T>): Promise<T> {
    try {
      return await this.#running.track(work(this.#usable()));
    } catch (error) {
      throw unavailableOr(error, this.#timeouts);
    }
  }


  /** The pool, while the store is open. */
  #usable(): Pool {
    // Without a pool the store was never opened, or its open failed: either way it is not usable.
    if (this.#closing || !this.#pool) throw new StoreClosedError();
    return this.#pool;
  }

  // The URLs' states, in a table of their own (see PostgresUrlStates).
  readonly #urls = new PostgresUrlStates((work) => this.#run(work));

  urlStates(): Promise<UrlState[]> {
    return this.#urls.urlStates();
  }

  changeUrlState(source: string, url: string, change: UrlStateChange): Promise<{ before: UrlState | undefined; after: UrlState | undefined }> {
    return this.#urls.changeUrlState(source, url, change);
  }
}

/** A row as a lookup reads it. */
interface RecordRow extends Omit<DeliveryRow, 'attempts' | 'targets' | 'accepted_here' | 'n'> {
  status: DeliveryState;
  attempt_log: AttemptRecord[];
  settled_at: number | null;
}

function toDelivery(row: Pick<DeliveryRow, 'id' | 'source' | 'message' | 'message_id' | 'type' | 'body' | 'received_at'>): Delivery {
  const delivery: Delivery = {
    id: row.id,
    source: row.source,
    message: row.message,
    webhook: { messageId: row.message_id, type: row.type, body: row.body, receivedAt: Number(row.received_at) },
  };
  // The URLs' filters look at a track's event; the message holds it, as the body does.
  if (row.type === 'track') delivery.webhook.event = (row.message as { event: string }).event;
  return delivery;
}

/** Webhook positions as a PostgreSQL array literal, the form the grouped statements take them in. */
function arrayLiteral(indexes: readonly number[]): string {
  return `{${indexes.join(',')}}`;
}

function toClaimed(row: DeliveryRow, claim: string, acceptedHere: boolean): Claimed {
  return claimOf(toDelivery(row), claim, row.attempts, acceptedHere, row.targets);
}

function toRecord(row: RecordRow): DeliveryRecord {
  const record: DeliveryRecord = { delivery: toDelivery(row), state: row.status, attempts: row.attempt_log };
  if (row.settled_at !== null) record.settledAt = Math.round(row.settled_at);
  return record;
}
