import type { Pool, PoolClient } from 'pg';
import { brokeConnection } from './failure.js';

/**
 * Runs `work` as one transaction on a pooled connection: committed when it resolves, rolled back
 * when it throws. While the connection is out of the pool its 'error' event is heard here (unheard,
 * a connection the server ends mid-transaction would end the process). A connection that broke or
 * whose statement timed out is not rolled back (its `ROLLBACK` would wait behind the statement that
 * does not answer; the server rolls back when the connection closes) and leaves the pool.
 */
export async function transaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // The failure reaches the statement that was running, too: that rejection is what is thrown.
  const heard = (): void => undefined;
  client.on('error', heard);
  let drop = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    drop = brokeConnection(error) || (await client.query('ROLLBACK').then(() => false, () => true));
    throw error;
  } finally {
    client.off('error', heard);
    client.release(drop);
  }
}
