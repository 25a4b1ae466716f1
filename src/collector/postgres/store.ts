import type { Pool, PoolClient } from 'pg';
import { AnalyticsError } from '../../errors.js';
import { log } from '../../log.js';
import type { AudienceState } from '../../webhooks/audience.js';
import type { WebhookType } from '../../webhooks/body.js';
import { type AudienceRecord, audienceKey, type Delivery, type Outcome, type Store, type StoreSnapshot, storeClosedError } from '../store.js';
import { integer } from '../../options.js';
import { Batcher } from './batcher.js';
import { postgresUrl, redact } from './connection-string.js';
import { SettledSweeper } from './retention.js';
import { migrate } from './schema.js';

/**
 * One statement per acceptance, whatever the number of deliveries: the columns travel as arrays
 * (a fixed 7 parameters, so a 20,000-member audience sync fits as well as one message) and are
 * unnested in order, so `seq` follows the order of acceptance.
 */
const INSERT_DELIVERIES = `
  INSERT INTO deliveries (id, source, message, message_id, type, body, received_at)
  SELECT id, source, message, message_id, type, body, received_at
  FROM unnest($1::text[], $2::text[], $3::json[], $4::text[], $5::text[], $6::text[], $7::bigint[])
    WITH ORDINALITY AS d(id, source, message, message_id, type, body, received_at, n)
  ORDER BY n`;

/** With an audience's new state: one statement is one transaction, so both land or neither does. */
const INSERT_WITH_AUDIENCE = `
  WITH audience AS (
    INSERT INTO audiences (source, name, state) VALUES ($8, $9, $10::json)
    ON CONFLICT (source, name) DO UPDATE SET state = excluded.state, updated_at = now()
  )${INSERT_DELIVERIES}`;

/** Settlements that arrive together share one statement. */
const SETTLE = `
  UPDATE deliveries AS d SET status = s.outcome, settled_at = now()
  FROM unnest($1::text[], $2::text[]) AS s(id, outcome)
  WHERE d.id = s.id AND d.status = 'pending'`;

const PENDING = `SELECT id, source, message, message_id, type, body, received_at FROM deliveries WHERE status = 'pending' ORDER BY seq`;

const AUDIENCES = 'SELECT source, state FROM audiences';

/**
 * The session lock one collector holds on its database while open: until processes claim their
 * work, a second one would deliver everything pending a second time. The ASCII bytes of "batchedA".
 */
const SOLE_USER_LOCK = '7089075258759930945';

/** Options of {@link PostgresStore}. Durations in ms. */
export interface PostgresStoreOptions {
  /**
   * How long a settled delivery stays in `deliveries` (to look up what was sent, and when) before
   * the retention sweep removes it.
   * @default 86400000 (24 h)
   */
  keepSettledFor?: number;
  /**
   * How often the retention sweep runs.
   * @default 60000 (1 min)
   */
  sweepEvery?: number;
}

export const POSTGRES_DEFAULTS = { keepSettledFor: 24 * 60 * 60 * 1000, sweepEvery: 60_000 } as const;

interface DeliveryRow {
  id: string;
  source: string;
  message: Delivery['message'];
  message_id: string;
  type: WebhookType;
  body: string;
  /** node-postgres returns a bigint as a string: it may exceed 2^53, ours never does. */
  received_at: string;
}

/**
 * A {@link Store} in PostgreSQL (node-postgres, loaded when the store opens, so that nothing else
 * in the package loads it). Every acceptance is one statement, committed before it resolves;
 * settlements are grouped: those that arrive while one UPDATE runs share the next. Audience states
 * are also kept in memory, loaded at open, so that `audience()` answers synchronously as the
 * interface requires.
 *
 * One collector process per database for now: claims and leases, which let several processes
 * share the queue, are not there yet.
 */
export class PostgresStore implements Store {
  readonly #connectionString: string;
  readonly #audiences = new Map<string, AudienceRecord>();
  #pool: Pool | undefined;
  /** The connection that holds {@link SOLE_USER_LOCK}; the lock goes when it does. */
  #holder: PoolClient | undefined;
  readonly #retention: { keepFor: number; every: number };
  #sweeper: SettledSweeper | undefined;
  #closing: Promise<void> | undefined;
  /** Acceptances in progress, which close() lets finish. */
  readonly #accepting = new Set<Promise<unknown>>();
  readonly #settles = new Batcher<[id: string, outcome: Outcome]>(async (settles) => {
    await this.#pool!.query(SETTLE, [settles.map(([id]) => id), settles.map(([, outcome]) => outcome)]);
  });

  /**
   * @param connectionString `postgres://USER[:PASSWORD]@HOST:PORT/DB` (or `postgresql://`), with any
   * parameters node-postgres reads (`?sslmode=require`, `?host=/run/postgresql`).
   * @throws {ConfigError} naming `connectionString` when it is not such a URL, or the option that is not
   * a valid duration.
   */
  constructor(connectionString: string, options: PostgresStoreOptions = {}) {
    this.#connectionString = postgresUrl('connectionString', connectionString);
    this.#retention = {
      keepFor: integer('keepSettledFor', options.keepSettledFor ?? POSTGRES_DEFAULTS.keepSettledFor, 0),
      every: integer('sweepEvery', options.sweepEvery ?? POSTGRES_DEFAULTS.sweepEvery, 1),
    };
  }

  /**
   * Connects, brings the schema up to date and loads what is pending and every audience's state.
   * @throws {AnalyticsError} `ERR_STORE_CONNECT` when the database cannot be reached or read;
   * `ERR_SCHEMA_VERSION` when a newer collector migrated it.
   */
  async open(): Promise<StoreSnapshot> {
    if (this.#closing) throw storeClosedError();
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: this.#connectionString });
    // An idle connection that breaks (a server restart) is replaced by the next query; unheard,
    // the pool's error event would end the process.
    pool.on('error', (error) => log('collector: PostgreSQL connection lost: %O', error));
    this.#pool = pool;
    try {
      await migrate(pool);
      this.#holder = await this.#lock(pool);
      const [pending, audiences] = await Promise.all([pool.query<DeliveryRow>(PENDING), pool.query<AudienceRecord>(AUDIENCES)]);
      for (const record of audiences.rows) this.#audiences.set(audienceKey(record.source, record.state.audience), record);
      this.#sweeper = new SettledSweeper(pool, this.#retention);
      log('collector: PostgreSQL store opened: %d pending, %d audiences', pending.rows.length, audiences.rows.length);
      return { pending: pending.rows.map(toDelivery), audiences: audiences.rows };
    } catch (error) {
      // Its idle connections would keep the process alive: the caller does not close a store that did not open.
      this.#pool = undefined;
      this.#holder?.release();
      this.#holder = undefined;
      await pool.end().catch(() => undefined);
      if (error instanceof AnalyticsError) throw error;
      throw new AnalyticsError(`Cannot open the PostgreSQL store ${redact(this.#connectionString)}: ${(error as Error).message}`, {
        code: 'ERR_STORE_CONNECT',
        cause: error,
      });
    }
  }

  async accept(deliveries: readonly Delivery[], audience?: AudienceRecord): Promise<void> {
    const pool = this.#usable();
    const columns = [
      deliveries.map((d) => d.id),
      deliveries.map((d) => d.source),
      deliveries.map((d) => JSON.stringify(d.message)),
      deliveries.map((d) => d.webhook.messageId),
      deliveries.map((d) => d.webhook.type),
      deliveries.map((d) => d.webhook.body),
      deliveries.map((d) => d.webhook.receivedAt),
    ];
    const values = audience ? [...columns, audience.source, audience.state.audience, JSON.stringify(audience.state)] : columns;
    const query = pool.query(audience ? INSERT_WITH_AUDIENCE : INSERT_DELIVERIES, values);
    this.#accepting.add(query);
    try {
      await query;
    } finally {
      this.#accepting.delete(query);
    }
    // Only once committed: a failed acceptance leaves no trace, here as in the database.
    if (audience) this.#audiences.set(audienceKey(audience.source, audience.state.audience), audience);
  }

  async settle(id: string, outcome: Outcome): Promise<void> {
    this.#usable();
    await this.#settles.add([id, outcome]);
  }

  audience(source: string, name: string): AudienceState | undefined {
    return this.#audiences.get(audienceKey(source, name))?.state;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled([...this.#accepting, this.#settles.idle(), this.#sweeper?.stop()]);
      this.#holder?.release();
      await this.#pool?.end();
    })();
    return this.#closing;
  }

  /**
   * Takes the database for this process alone.
   * @throws {AnalyticsError} `ERR_STORE_IN_USE` when another collector holds it.
   */
  async #lock(pool: Pool): Promise<PoolClient> {
    const holder = await pool.connect();
    const { rows } = await holder.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [SOLE_USER_LOCK]).catch((error: unknown) => {
      holder.release();
      throw error;
    });
    if (!rows[0]!.locked) {
      holder.release();
      throw new AnalyticsError(
        `Another collector is using the PostgreSQL store ${redact(this.#connectionString)}: one collector per database for now (several sharing one are not supported yet)`,
        { code: 'ERR_STORE_IN_USE' },
      );
    }
    return holder;
  }

  /** The pool, while the store is open. */
  #usable(): Pool {
    // Without a pool the store was never opened, or its open failed: either way it is not usable.
    if (this.#closing || !this.#pool) throw storeClosedError();
    return this.#pool;
  }
}

function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    source: row.source,
    message: row.message,
    webhook: { messageId: row.message_id, type: row.type, body: row.body, receivedAt: Number(row.received_at) },
  };
}
