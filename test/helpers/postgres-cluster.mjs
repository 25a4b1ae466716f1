// @ts-check
// A throwaway PostgreSQL cluster: Debian's server binaries, a cluster in a temp dir on a free
// loopback port, removed after. Plain JavaScript so that the TypeScript tests (through
// test/helpers/postgres.ts) and the benchmarks under bench/ start it with the same code. The
// server refuses to run as root, so under root (CI) every command runs as `nobody`, and the temp
// dir belongs to it.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/**
 * The directory holding initdb, pg_ctl and postgres; undefined when the server is not installed.
 * @returns {string | undefined}
 */
export function postgresBin() {
  /** @type {string[]} */
  const candidates = [];
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

/** Why no cluster can start here (one line), or undefined when the server binaries are installed. */
export const POSTGRES_MISSING =
  postgresBin() === undefined ? 'PostgreSQL server binaries (initdb, pg_ctl, postgres) not found: apt-get install postgresql' : undefined;

/**
 * A running throwaway cluster.
 * @typedef {object} PostgresCluster
 * @property {string} url Connection string of the `postgres` database, as the `postgres` superuser (trust auth).
 * @property {() => Promise<string>} createDatabase Creates an empty database and returns its connection string.
 * @property {() => Promise<void>} stop Stops the server at once and removes its files. Idempotent.
 * @property {() => void} freeze Stops every process of the server with SIGSTOP (the postmaster first, so
 * it forks no more): it keeps accepting TCP connections (the kernel does) and answers nothing, as a
 * server whose host hangs does.
 * @property {() => void} thaw Lets the processes `freeze` stopped go on (SIGCONT).
 * @property {() => Promise<void>} shutDown Stops the server as an operator does (`pg_ctl stop -m fast`:
 * connections are ended, new ones refused), keeping its data.
 * @property {() => Promise<void>} startUp Starts the server `shutDown` stopped, on the same port.
 */

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;

/**
 * Runs a server binary, as `nobody` when we are root.
 * @param {string} bin
 * @param {string} name
 * @param {string[]} args
 * @param {string} cwd
 */
function runAs(bin, name, args, cwd) {
  const command = path.join(bin, name);
  return asRoot ? run('runuser', ['-u', 'nobody', '--', command, ...args], { cwd }) : run(command, args, { cwd });
}

/**
 * A port free right now on 127.0.0.1; the caller retries if another process takes it first.
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * Creates a cluster in a temp dir and starts it on a free loopback port (fsync off: its data need
 * not survive a power cut). Resolves once it accepts connections.
 * @param {{ settings?: Record<string, string> }} [options] `settings`: more server settings, each
 * passed as `-c NAME=VALUE` (e.g. `{ shared_preload_libraries: 'pg_stat_statements' }`).
 * @returns {Promise<PostgresCluster>}
 * @throws when the binaries are missing, or the server does not start.
 */
export async function startPostgres({ settings = {} } = {}) {
  const bin = postgresBin();
  if (bin === undefined) throw new Error(POSTGRES_MISSING);
  const root = mkdtempSync(path.join(tmpdir(), 'pg-throwaway-'));
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
  const extra = Object.entries(settings).map(([name, value]) => ` -c ${name}=${value}`).join('');
  let port = 0;
  const start = () => {
    const options = `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off${extra}`;
    return runAs(bin, 'pg_ctl', ['start', '-w', '-t', '30', '-D', data, '-l', path.join(root, 'server.log'), '-s', '-o', options], root);
  };
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await start();
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
  /** @type {Promise<void> | undefined} */
  let stopping;
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
        thaw(data);
        await runAs(bin, 'pg_ctl', ['stop', '-m', 'immediate', '-D', data, '-s'], root).catch(() => undefined);
        removeRoot();
      })()),
    freeze: () => signalAll(data, 'SIGSTOP'),
    thaw: () => thaw(data),
    shutDown: async () => {
      await runAs(bin, 'pg_ctl', ['stop', '-m', 'fast', '-w', '-D', data, '-s'], root);
    },
    startUp: async () => {
      await start();
    },
  };
}

/**
 * Sends `signal` to the cluster's postmaster, then to each of its children (backends and
 * background processes), found through /proc.
 * @param {string} data the cluster's data directory
 * @param {NodeJS.Signals} signal
 */
function signalAll(data, signal) {
  const postmaster = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(postmaster, signal);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // Fields after the command (in parentheses, which may hold spaces): state, then the parent's pid.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (parent !== postmaster) continue;
    try {
      process.kill(Number(entry), signal);
    } catch (error) {
      // A backend that ended between the listing and the signal needs none.
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'ESRCH') throw error;
    }
  }
}

/**
 * Continues a frozen cluster; does nothing to one that is not running.
 * @param {string} data
 */
function thaw(data) {
  if (existsSync(path.join(data, 'postmaster.pid'))) signalAll(data, 'SIGCONT');
}
