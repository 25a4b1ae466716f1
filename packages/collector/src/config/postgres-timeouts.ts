import type { ClientConfig } from 'pg';

/**
 * How long the collector waits on PostgreSQL, in ms: the config's `"postgres"` entry. Every
 * connection the store opens (its pool, the `LISTEN` connections, the live page's history) has them,
 * so a database that stops answering (a frozen host, a network cut, a lock held for ever) turns into
 * a refusal (503 with `Retry-After`) in seconds, not a request that hangs past the client's timeout.
 */
export interface PostgresTimeouts {
  /**
   * How long opening a connection may take, TCP and PostgreSQL's start-up both; also how long a
   * statement waits for a free pooled connection.
   * @default 3000
   */
  connectTimeout: number;
  /**
   * How long the server lets a statement run before it cancels it (`statement_timeout`), waiting
   * for locks included: the transaction is rolled back and the connection stays usable.
   * @default 3000
   */
  statementTimeout: number;
  /**
   * How long the collector waits for a statement's answer before it gives up on it and on its
   * connection: a frozen or cut-off server cannot enforce its own statement timeout. At least
   * `statementTimeout`, so that a server that still answers cancels first.
   * @default 4000
   */
  queryTimeout: number;
  /**
   * How long the server keeps a transaction open that waits for the collector
   * (`idle_in_transaction_session_timeout`): a collector frozen mid-transaction does not hold its
   * locks (an audience's, the migrations') for longer.
   * @default 5000
   */
  idleInTransactionTimeout: number;
}

/** Defaults of {@link PostgresTimeouts}, declared once. */
export const POSTGRES_TIMEOUTS: Readonly<PostgresTimeouts> = Object.freeze({
  connectTimeout: 3_000,
  statementTimeout: 3_000,
  queryTimeout: 4_000,
  idleInTransactionTimeout: 5_000,
});

/** The config's `"postgres"` entry: the timeouts of every connection, and how long a start waits. */
export interface PostgresOptions extends PostgresTimeouts {
  /**
   * How long a collector started before its database keeps trying to open the store (with backoff,
   * each try logged; `/readyz` answers 503 meanwhile) before it exits 1. 0: it exits at the first
   * failure, after at most `connectTimeout`.
   * @default 60000
   */
  startTimeout: number;
}

/** Defaults of {@link PostgresOptions}, declared once. */
export const POSTGRES_OPTIONS: Readonly<PostgresOptions> = Object.freeze({ ...POSTGRES_TIMEOUTS, startTimeout: 60_000 });

/** What node-postgres makes of the timeouts, for a pool's connections and single ones alike. */
export function connectionConfig(connectionString: string, timeouts: PostgresTimeouts): ClientConfig {
  return {
    connectionString,
    connectionTimeoutMillis: timeouts.connectTimeout,
    statement_timeout: timeouts.statementTimeout,
    query_timeout: timeouts.queryTimeout,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeout,
  };
}
