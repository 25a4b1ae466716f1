import type { Pool } from 'pg';
import { withoutUndefined, type UrlState, type UrlStateChange, type UrlStates } from '../url-states.js';
import { transaction } from './transaction.js';

/** Serialises the changes of one URL's state across processes, for the length of the transaction. */
const LOCK_URL = `SELECT pg_advisory_xact_lock(hashtext('webhook_urls:' || $1), hashtext($2))`;
const READ_URL = 'SELECT state FROM webhook_urls WHERE source = $1 AND url = $2';
const WRITE_URL = `
  INSERT INTO webhook_urls (source, url, state) VALUES ($1, $2, $3::json)
  ON CONFLICT (source, url) DO UPDATE SET state = excluded.state, updated_at = now()`;
const READ_ALL = 'SELECT state FROM webhook_urls';

/**
 * The URLs' states in the `webhook_urls` table, shared by every process on the database. `run`
 * is the store's: it refuses once the store is closed and turns a database failure into
 * `StoreUnavailableError`.
 */
export class PostgresUrlStates implements UrlStates {
  readonly #run: <T>(work: (pool: Pool) => Promise<T>) => Promise<T>;

  constructor(run: <T>(work: (pool: Pool) => Promise<T>) => Promise<T>) {
    this.#run = run;
  }

  urlStates(): Promise<UrlState[]> {
    return this.#run(async (pool) => (await pool.query<{ state: UrlState }>(READ_ALL)).rows.map(({ state }) => state));
  }

  changeUrlState(source: string, url: string, change: UrlStateChange): Promise<{ before: UrlState | undefined; after: UrlState | undefined }> {
    return this.#run((pool) =>
      transaction(pool, async (client) => {
        await client.query(LOCK_URL, [source, url]);
        const before = (await client.query<{ state: UrlState }>(READ_URL, [source, url])).rows[0]?.state;
        const next = change(before === undefined ? undefined : { ...before });
        if (next === undefined) return { before, after: before };
        const after = withoutUndefined({ ...next, source, url });
        await client.query(WRITE_URL, [source, url, JSON.stringify(after)]);
        return { before, after };
      }),
    );
  }
}
