import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IN_CI } from './ci.js';
import { POSTGRES_MISSING as MISSING, type PostgresCluster, startPostgres } from './postgres-cluster.mjs';

// A throwaway PostgreSQL cluster for tests (started by ./postgres-cluster.mjs, which the benchmarks
// share), the switch that skips PostgreSQL tests, and a one-statement query helper.
export { type PostgresCluster, postgresBin } from './postgres-cluster.mjs';

/**
 * Why PostgreSQL tests skip here (a one-line reason for their titles), or undefined when they run:
 * they run when the server is installed, and under CI=true, where a missing server fails them.
 */
export const POSTGRES_SKIP = MISSING !== undefined && !IN_CI ? MISSING : undefined;

/**
 * Gives the calling test file one cluster, started before its tests and removed after, and a test
 * that fails under CI=true when the server is missing (elsewhere it skips with the others).
 * @returns the cluster, once beforeAll has run.
 */
export function useThrowawayCluster(): () => PostgresCluster {
  let cluster: PostgresCluster | undefined;
  beforeAll(async () => {
    if (POSTGRES_SKIP === undefined) cluster = await startPostgres();
  }, 60_000);
  afterAll(() => cluster?.stop());
  it('has a PostgreSQL server to test against', (ctx) => {
    ctx.skip(POSTGRES_SKIP !== undefined, POSTGRES_SKIP);
    expect(MISSING, 'CI=true: PostgreSQL tests must run (.ci/run installs the server)').toBeUndefined();
  });
  return () => cluster!;
}

/** A store a `serve` test runs on: its name, the flags that point `serve` at a fresh one, and why it skips here. */
export type ServeStore = [name: string, flags: () => Promise<string[]>, skip: string | undefined];

/** The journal, in a fresh data dir under `dir`, and PostgreSQL, in a fresh database of `cluster`. */
export function serveStores(dir: string, cluster: () => PostgresCluster): ServeStore[] {
  return [
    ['the journal', async () => ['--data-dir', `${dir}/${Math.random().toString(36).slice(2)}`], undefined],
    ['PostgreSQL', async () => ['--store', await cluster().createDatabase()], POSTGRES_SKIP],
  ];
}

/** Runs one statement on a connection of its own and returns its rows. */
export async function sql<Row extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}
