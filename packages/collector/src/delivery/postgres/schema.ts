import type { Pool } from 'pg';
import { log } from 'batched-analytics/internal';
import { SchemaVersionError } from '../errors.js';
import { transaction } from './transaction.js';

/** One step of the schema, applied once per database, in order. Never edit a released one: add the next. */
interface Migration {
  version: number;
  sql: string;
}

/**
 * The schema, as ordered migrations.
 *
 * `deliveries` holds one row per delivery for its whole life: the collector's `Delivery` with its
 * `webhook` as fixed at acceptance. The body is `text`, not `jsonb`, so the bytes sent are exactly
 * those accepted (jsonb would reorder keys and normalise numbers and escapes); `message` is `json`
 * (kept as written, any JSON string escape included, which `jsonb` refuses for `\u0000`), and so is
 * an audience's `state`. `received_at` is the webhook's `receivedAt` in ms since the epoch, the start
 * of the retry window, kept exact as a bigint; `accepted_at` is the server's clock, for monitoring.
 * `seq` orders pending rows by acceptance.
 *
 * Claiming lets any number of processes share the queue: a pending row is due once
 * `next_attempt_at` has come (a new row at once, a retry at its scheduled time), found through the
 * partial index of pending rows. Claiming it sets `claim_id` (one per claiming statement),
 * `claimed_by` (host and pid, for monitoring and tests) and `lease_until`, and moves
 * `next_attempt_at` to the lease's end: a claim that is neither renewed nor settled makes the row
 * due again when its lease runs out, with no other column to look at. `attempts` counts the
 * attempts started; `targets` lists the webhooks still worth asking (NULL: all of them). A settled
 * row is deleted, or, when the store keeps settled rows, keeps its outcome in `status` and
 * `settled_at` for retention (with its claim id cleared: only a pending, claimed row has one).
 *
 * `batched_analytics_due(n)` locks and returns the ids of the `n` rows due first, read in order
 * from the due index. It is a function only to plan it with bitmap scans and sorts off: a queue
 * table fills and drains faster than its statistics follow, and with too few rows in them the
 * planner chose to read and sort every due row for each claim, however long the backlog.
 *
 * `events` is the live page's history, shared by the processes: one row per recorded state of an
 * event (its view and the webhook it was sent as, as JSON text: only collectors read it, and text
 * spares the server parsing it), appended, never updated, so `seq` tells the processes following
 * it what is new. An event's current state is its row with the highest `seq`.
 * `written_by` names the process that wrote it, so that one does not read its own states back.
 *
 * `waiting_for` lists the webhooks (of `targets`) a retry waits for only because their URL backs
 * off or is disabled: when one answers again or is enabled, `hasten` makes the retry due at once.
 *
 * `attempt_log` is the delivery's record of its attempts (what each receiver answered, a JSON
 * array, appended to by each retry and by the settlement), and `deliveries_message_id` finds the
 * deliveries of a `messageId` for a lookup. `recovered_by` names the delivery a recovery sent a
 * given-up one again as (set in the recovery's transaction): none is recovered twice.
 *
 * `message_ids` is the de-duplication's memory: one row per source and `messageId` accepted within
 * the window, claimed by the acceptance's transaction (its primary key makes two collectors
 * accepting the same message at once wait for each other, and only one records it), with
 * `accepted_at` in ms since the epoch by the accepting collector's clock; the sweep deletes rows
 * older than the window through the index on it.
 *
 * `webhook_urls` holds the state of each webhook URL that failed (`UrlState` as JSON: since when it
 * fails, whether it is disabled): a row per URL, changed under an advisory lock per URL, read whole.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE deliveries (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        id text PRIMARY KEY,
        source text NOT NULL,
        message json NOT NULL,
        message_id text NOT NULL,
        type text NOT NULL,
        body text NOT NULL,
        received_at bigint NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        claim_id uuid,
        lease_until timestamptz,
        accepted_at timestamptz NOT NULL DEFAULT now(),
        settled_at timestamptz
      );
      CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX deliveries_settled ON deliveries (settled_at) WHERE status <> 'pending';
      CREATE TABLE audiences (
        source text NOT NULL,
        name text NOT NULL,
        state json NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (source, name)
      );`,
  },
  {
    version: 2,
    sql: `
      ALTER TABLE deliveries ADD COLUMN targets smallint[], ADD COLUMN claimed_by text;
      DROP INDEX deliveries_due;
      CREATE INDEX deliveries_due ON deliveries (next_attempt_at, seq) WHERE status = 'pending';`,
  },
  {
    version: 3,
    sql: `
      CREATE TABLE events (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL,
        entry text NOT NULL,
        written_by uuid NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE FUNCTION batched_analytics_due(n integer) RETURNS SETOF text LANGUAGE sql
        SET enable_bitmapscan = off SET enable_sort = off
        AS $$
          SELECT id FROM deliveries WHERE status = 'pending' AND next_attempt_at <= now()
          ORDER BY next_attempt_at, seq LIMIT n FOR UPDATE SKIP LOCKED
        $$;`,
  },
  {
    version: 4,
    sql: `
      CREATE TABLE message_ids (
        source text NOT NULL,
        message_id text NOT NULL,
        accepted_at bigint NOT NULL,
        PRIMARY KEY (source, message_id)
      );
      CREATE INDEX message_ids_accepted ON message_ids (accepted_at);`,
  },
  {
    version: 5,
    sql: `
      ALTER TABLE deliveries ADD COLUMN attempt_log jsonb NOT NULL DEFAULT '[]', ADD COLUMN recovered_by text;
      CREATE INDEX deliveries_message_id ON deliveries (message_id);`,
  },
  {
    version: 6,
    sql: `
      CREATE TABLE webhook_urls (
        source text NOT NULL,
        url text NOT NULL,
        state json NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (source, url)
      );`,
  },
  {
    version: 7,
    sql: `ALTER TABLE deliveries ADD COLUMN accepted_by uuid;`,
  },
  {
    version: 8,
    sql: `ALTER TABLE deliveries ADD COLUMN waiting_for smallint[];`,
  },
];

/** The schema version this code writes: the last migration's. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** The advisory lock that serialises migrations across processes: the ASCII bytes of "batched-" as a bigint. */
const MIGRATION_LOCK = '7089075258759930925';

/**
 * Brings the database's schema to {@link SCHEMA_VERSION}: creates it on an empty database, applies
 * the missing migrations, and does nothing when it is current. Safe when several processes start at
 * once: each runs in one transaction holding an advisory lock, so the first applies the migrations
 * and the others, once it commits, find them applied. A failed migration leaves nothing applied.
 * @returns the version the database had before.
 * @throws {SchemaVersionError} when the database was migrated by a newer version.
 */
export async function migrate(pool: Pool): Promise<number> {
  const previous = await transaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const { rows } = await client.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM schema_version');
    const current = rows[0]!.version;
    if (current > SCHEMA_VERSION) {
      throw new SchemaVersionError(`The database has schema version ${current}; this collector knows up to version ${SCHEMA_VERSION}`);
    }
    for (const migration of MIGRATIONS.filter(({ version }) => version > current)) {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_version (version) VALUES ($1)', [migration.version]);
    }
    return current;
  });
  if (previous < SCHEMA_VERSION) log('collector: PostgreSQL schema migrated from version %d to %d', previous, SCHEMA_VERSION);
  return previous;
}
