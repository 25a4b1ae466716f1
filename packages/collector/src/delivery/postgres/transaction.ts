import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` in one transaction on a connection of its own: committed when it resolves, rolled
 * back (and its error rethrown) when it throws, the connection given back either way.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A failed ROLLBACK (the connection broke) changes nothing: the server rolls back on its own.
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
