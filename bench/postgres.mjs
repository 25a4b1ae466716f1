// The collector benchmark's PostgreSQL side (bench/collector.mjs --store): the server, a fresh
// database per run, and how many statements the collectors ran in it, from pg_stat_statements.
import { existsSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { postgresBin, startPostgres } from '../test/helpers/postgres-cluster.mjs';

const THIS_DATABASE = '(SELECT oid FROM pg_database WHERE datname = current_database())';
const RESET = `SELECT pg_stat_statements_reset(0, ${THIS_DATABASE}, 0)`;
/** The bench's own statements are left out: they all name pg_stat_statements. */
const COUNT = `SELECT coalesce(sum(calls), 0)::integer AS calls FROM pg_stat_statements
  WHERE dbid = ${THIS_DATABASE} AND query NOT LIKE '%pg_stat_statements%'`;

async function query(url, text) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

/** A connection string fit to print: its password masked. */
export function redact(url) {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.href;
}

/**
 * The server the store rows run on. `local`: a throwaway cluster started by the tests' code, with
 * pg_stat_statements preloaded when the server has it (Debian's postgresql-15 ships it), removed by
 * stop(). Otherwise a connection string whose user may create databases; stop() leaves it alone.
 */
export async function openServer(spec) {
  if (spec !== 'local') return { name: redact(spec), url: spec, stop: async () => {} };
  const bin = postgresBin();
  // A library the server loads only at start: asking for one it lacks would stop it starting.
  const statements = bin !== undefined && existsSync(path.join(bin, '../lib/pg_stat_statements.so'));
  const cluster = await startPostgres({ settings: statements ? { shared_preload_libraries: 'pg_stat_statements' } : {} });
  return { name: `throwaway cluster (${bin})`, url: cluster.url, stop: cluster.stop };
}

let databases = 0;

/**
 * Creates an empty database on the server for one run, with pg_stat_statements in it when the
 * server allows (preloaded, and a user who may create the extension and reset its counts).
 */
export async function freshDatabase(serverUrl) {
  const name = `bench_collector_${process.pid}_${++databases}`;
  await query(serverUrl, `CREATE DATABASE ${name}`);
  const parsed = new URL(serverUrl);
  parsed.pathname = `/${name}`;
  const url = parsed.href;
  /** Why statements are not counted; undefined while they are. */
  let unavailable = await query(url, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements').then(
    () => undefined,
    (error) => `pg_stat_statements: ${error.message}`,
  );
  return {
    url,
    /** Counts from now on (what ran before, the collectors' migrations and opening, is not counted). */
    async countFromNow() {
      if (unavailable === undefined) unavailable = await query(url, RESET).then(() => undefined, (error) => `pg_stat_statements_reset: ${error.message}`);
    },
    /** The statements counted so far, or why there is no count. */
    async statements() {
      if (unavailable !== undefined) return { unavailable };
      return { count: (await query(url, COUNT))[0].calls };
    },
    drop: () => query(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
