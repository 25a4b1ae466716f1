import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';

// A throwaway PostgreSQL cluster for tests: Debian's server binaries, a cluster in a temp dir on a
// free loopback port, removed after. The server refuses to run as root, so under root (CI) every
// command runs as `nobody`, and the temp dir belongs to it.
const run = promisify(execFile);

/** The directory holding initdb, pg_ctl and postgres; undefined when the server is not installed. */
export function postgresBin(): string | undefined {
  const candidates: string[] = [];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // pg_config is missing or belongs to a client-only install: look where Debian puts servers.
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => path.join(debian, version, 'bin')));
  }
  return candidates.find((dir) => ['initdb', 'pg_ctl', 'postgres'].every((name) => existsSync(path.join(dir, name))));
}

const MISSING = postgresBin() === undefined ? 'PostgreSQL server binaries (initdb, pg_ctl, postgres) not found: apt-get install postgresql' : undefined;
/**
 * Why PostgreSQL tests skip here (a one-line reason for their titles), or undefined when they run:
 * they run when the server is installed, and under CI=true, where a missing server fails them.
 */
export const POSTGRES_SKIP = MISSING !== undefined && process.env.CI !== 'true' ? MISSING : undefined;

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
  it.skipIf(POSTGRES_SKIP !== undefined)('has a PostgreSQL server to test against', () => {
    expect(MISSING, 'CI=true: PostgreSQL tests must run (.ci/run installs the server)').toBeUndefined();
  });
  return () => cluster!;
}

/** A running throwaway cluster. */
export interface PostgresCluster {
  /** Connection string of the `postgres` database, as the `postgres` superuser (trust auth). */
  url: string;
  /** Creates an empty database and returns its connection string. */
  createDatabase(): Promise<string>;
  /** Stops the server at once and removes its files. Idempotent. */
  stop(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;

/** Runs a server binary, as `nobody` when we are root. */
function runAs(bin: string, name: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  const command = path.join(bin, name);
  return asRoot ? run('runuser', ['-u', 'nobody', '--', command, ...args], { cwd }) : run(command, args, { cwd });
}

/** A port free right now on 127.0.0.1; the caller retries if another process takes it first. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Creates a cluster in a temp dir and starts it on a free loopback port (fsync off: a test's data
 * need not survive a power cut). Resolves once it accepts connections.
 * @throws when the binaries are missing.
 */
async function startPostgres(): Promise<PostgresCluster> {
  const bin = postgresBin();
  if (bin === undefined) throw new Error(MISSING);
  const root = mkdtempSync(path.join(tmpdir(), 'pg-test-'));
  const data = path.join(root, 'data');
  const sockets = path.join(root, 'sockets');
  if (asRoot) {
    chownSync(root, NOBODY, NOBODY);
    // mkdtemp makes it 0700 for root; nobody owns it now, and the parent (/tmp) is world-traversable.
    chmodSync(root, 0o755);
  }
  const removeRoot = () => rmSync(root, { recursive: true, force: true });
  try {
    mkdirSync(sockets);
    if (asRoot) chownSync(sockets, NOBODY, NOBODY);
    await runAs(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-locale', '--no-sync'], root);
  } catch (error) {
    removeRoot();
    throw error;
  }
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    const options = `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    try {
      await runAs(bin, 'pg_ctl', ['start', '-w', '-t', '30', '-D', data, '-l', path.join(root, 'server.log'), '-s', '-o', options], root);
      break;
    } catch (error) {
      // Most likely another process took the port between freePort() and the server's bind.
      if (attempt === 3) {
        removeRoot();
        throw error;
      }
    }
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let databases = 0;
  let stopping: Promise<void> | undefined;
  return {
    url,
    async createDatabase() {
      const name = `test_${++databases}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    stop: () =>
      (stopping ??= (async () => {
        await runAs(bin, 'pg_ctl', ['stop', '-m', 'immediate', '-D', data, '-s'], root).catch(() => undefined);
        removeRoot();
      })()),
  };
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
