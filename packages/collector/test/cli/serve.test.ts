// `batched-analytics serve`: flags, config errors, startup and shutdown, through the real executable.
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { postJson, runCli, startCollector, stopAll, tempDir, waitFor, writeConfig } from '../../../../test/helpers/collector.js';

const MINIMAL = { sources: [{ name: 'web', writeKey: 'wk_web' }] };

/** Runs `test` with a temporary directory of its own, so that tests can run concurrently. */
async function inTempDir(test: (dir: string) => Promise<void>): Promise<void> {
  const temp = tempDir();
  try {
    await test(temp.dir);
  } finally {
    temp.remove();
  }
}

describe.concurrent('help', () => {
  it('lists serve among the commands', async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\s+serve\s+\S/m);
  });

  it('serve --help describes every flag and the config file', async () => {
    const { code, stdout } = await runCli(['serve', '--help']);
    expect(code).toBe(0);
    for (const flag of ['--config FILE', '--port N', '--host H', '--data-dir DIR', '--store URL', '-h, --help', '"sources"', '"adminToken"', '"readToken"', '"delivery"', '"server"', '"queue"', '"dedupe"', '"allowedHosts"', '"historyEvents"', '"store"', '"postgres"', 'or: batched-analytics-collector']) {
      expect(stdout).toContain(flag);
    }
    // Every limit with its default.
    expect(stdout).toContain('"postgres": { "connectTimeout": 3000, "startTimeout": 60000, "statementTimeout": 3000,');
    expect(stdout).toContain('"queryTimeout": 4000, "idleInTransactionTimeout": 5000 }');
    expect(stdout).toContain('"drainDelay": 5000, "sessionLifetime": 43200000, "heapTarget": 192,');
    for (const option of ['"publicUrl"', '"trustProxy"', '"allowedOrigins"']) expect(stdout).toContain(option);
    expect(stdout).toContain('GET /healthz');
  });
});

describe.concurrent('bad command lines and config files: one line naming the problem, exit 2', () => {
  it.each([
    [['--port', '8088'], /Expected --config FILE/],
    [['--config', 'c.json', '--bogus'], /--bogus/],
    [['--config', 'c.json', '--port', 'abc'], /--port .*"abc"/],
    [['--config', 'c.json', '--port', '70000'], /--port .*65535/],
    [['--config', 'c.json', 'extra'], /"extra"/],
    [['--config', 'missing.json'], /Cannot read config file missing\.json/],
    [['--config', 'c.json', '--store', 'mysql://u:pw@db/x'], /`--store` to be a PostgreSQL URL.*mysql:\/\/u:\*\*\*@db\/x/],
    [['--config', 'c.json', '--store', 'postgres://db/x', '--data-dir', 'd'], /--data-dir or --store, not both/],
  ])('serve %j', (args, message) =>
    inTempDir(async (dir) => {
      writeConfig(dir, MINIMAL, 'c.json');
      const { code, stdout, stderr } = await runCli(['serve', ...args], { cwd: dir });
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(stderr).toMatch(message);
    }));

  it.each([
    ['{ "sources": [', /not valid JSON/],
    [{ sources: [] }, /`sources` to be a non-empty array/],
    [{ sources: [{ name: 'web' }] }, /`sources\[0\]\.writeKey`/],
    [{ sources: [{ name: 'web', writeKey: 'k', destinations: { Webhooks: { webhooks: [{ url: 'ftp://x' }] } } }] }, /`sources\[0\]\.destinations\.Webhooks\.webhooks\[0\]\.url`/],
    [{ sources: [{ name: 'web', writeKey: 'k', destinations: { Slack: {} } }] }, /`sources\[0\]\.destinations`.*`Slack`/],
    [{ source: [] }, /`source`/],
    [{ ...MINIMAL, store: '/var/run/postgresql' }, /`store` to be a PostgreSQL URL/],
  ])('config %j', (config, message) =>
    inTempDir(async (dir) => {
      const file = writeConfig(dir, config);
      const { code, stderr } = await runCli(['serve', '--config', file]);
      expect(code).toBe(2);
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(stderr).toMatch(message);
      expect(stderr).toContain(file);
    }));

  // Start-up errors land in terminals, CI logs and crash reports: an entry that may hold a secret
  // is named with what is wrong, never with its text.
  const webhook = (entry: Record<string, unknown>) => ({ sources: [{ name: 'web', writeKey: 'k', destinations: { Webhooks: { webhooks: [{ url: 'https://hooks.example/in', ...entry }] } } }] });
  it.each([
    [{ sources: [{ name: 'web', writeKey: 'wk_web:SECRET1' }] }, 'sources[0].writeKey', 'SECRET1'],
    [{ sources: [{ name: 'web', writeKey: 'wk_SECRET2\u0007' }] }, 'sources[0].writeKey', 'SECRET2'],
    [{ ...MINIMAL, adminToken: 'SECRET3' }, 'adminToken', 'SECRET3'],
    [{ ...MINIMAL, readToken: 'SECRET4 with spaces inside' }, 'readToken', 'SECRET4'],
    [webhook({ url: 'ftp://hooks.example/in?token=SECRET5' }), 'sources[0].destinations.Webhooks.webhooks[0].url', 'SECRET5'],
    [webhook({ url: 'https://me:SECRET6@/in' }), 'sources[0].destinations.Webhooks.webhooks[0].url', 'SECRET6'],
    [webhook({ headers: { 'X-Key': 'SECRET7\n' } }), 'sources[0].destinations.Webhooks.webhooks[0].headers.X-Key', 'SECRET7'],
    [{ ...MINIMAL, store: 'postgres://app:SECRET8@db.internal:99999/analytics' }, 'store', 'SECRET8'],
    [{ ...MINIMAL, server: { publicUrl: 'https://me:SECRET9@collect.example' } }, 'server.publicUrl', 'SECRET9'],
  ])('config %j: names %s without its secret', (config, entry, secret) =>
    inTempDir(async (dir) => {
      const { code, stderr } = await runCli(['serve', '--config', writeConfig(dir, config)]);
      expect(code).toBe(2);
      expect(stderr).toContain(`\`${entry}\``);
      expect(stderr).not.toContain(secret);
    }));

  it('names --store without the password of a URL that does not parse', () =>
    inTempDir(async (dir) => {
      writeConfig(dir, MINIMAL, 'c.json');
      const { code, stderr } = await runCli(['serve', '--config', 'c.json', '--store', 'postgres://app:SECRET10@db.internal:99999/analytics'], { cwd: dir });
      expect(code).toBe(2);
      expect(stderr).toContain('`--store`');
      expect(stderr).not.toContain('SECRET10');
    }));
});

describe('running', () => {
  let temp = tempDir();
  afterEach(async () => {
    await stopAll();
    temp.remove();
    temp = tempDir();
  });
  afterAll(() => temp.remove());

  it('prints only its base URL on stdout, on 127.0.0.1 and a free port with --port 0', async () => {
    const collector = await startCollector(['--config', writeConfig(temp.dir, MINIMAL), '--port', '0', '--data-dir', `${temp.dir}/d`]);
    expect(collector.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(collector.url).port).not.toBe('0');
    expect((await fetch(`${collector.url}/`)).status).toBe(200);
    // A separate pipe from stdout: the report may arrive just after the URL.
    await waitFor(() => collector.stderr().includes(`data dir:     ${temp.dir}/d\n`), 'the data dir in the report');
  });

  it('listens on the --host and --port given', async () => {
    const port = await freePort();
    const collector = await startCollector(['--config', writeConfig(temp.dir, MINIMAL), '--port', String(port), '--host', 'localhost', '--data-dir', `${temp.dir}/d`]);
    expect(new URL(collector.url).port).toBe(String(port));
    expect((await fetch(`http://localhost:${port}/`)).status).toBe(200);
  });

  it('with --host 0.0.0.0, reports a live page URL a browser can open, and that it listens on every interface', async () => {
    const config = writeConfig(temp.dir, { ...MINIMAL, adminToken: 'admin-token-0123456789' });
    const collector = await startCollector(['--config', config, '--port', '0', '--host', '0.0.0.0', '--data-dir', `${temp.dir}/d`]);
    const { port } = new URL(collector.url);
    await waitFor(() => collector.stderr().includes('data dir:'), 'the report');
    expect(collector.stderr()).toContain(`  live events:  http://127.0.0.1:${port}/ (listening on every interface)\n`);
    expect(collector.stderr()).not.toContain('live events:  http://0.0.0.0');
    expect((await fetch(`http://127.0.0.1:${port}/`, { headers: { authorization: 'Bearer admin-token-0123456789' } })).status).toBe(200);
  });

  it('without --data-dir, journals in ./.batched-analytics and says so', async () => {
    const collector = await startCollector(['--config', writeConfig(temp.dir, MINIMAL), '--port', '0'], { cwd: temp.dir });
    const dir = path.join(temp.dir, '.batched-analytics');
    await waitFor(() => collector.stderr().includes(`data dir:     ${dir} (default; choose with --data-dir)`), 'the default data dir');
    expect(existsSync(path.join(dir, 'journal-00000001.ndjson'))).toBe(true);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('%s stops it cleanly: exit 0, lock released, port closed', async (signal) => {
    const dataDir = `${temp.dir}/d`;
    const collector = await startCollector(['--config', writeConfig(temp.dir, MINIMAL), '--port', '0', '--data-dir', dataDir]);
    expect(readFileSync(path.join(dataDir, 'lock'), 'utf8').split('\n')[0]).toBe(String(collector.child.pid));
    expect(await collector.stop(signal)).toEqual({ code: 0, signal: null });
    expect(existsSync(path.join(dataDir, 'lock'))).toBe(false);
    await expect(fetch(`${collector.url}/`)).rejects.toThrow();
  });

  it.each([
    ['batched-analytics serve', ['serve'], undefined],
    ['batched-analytics-collector', [], fileURLToPath(new URL('../../bin/batched-analytics-collector.js', import.meta.url))],
  ])('run as `%s`, exits 1 naming that program when the port is taken or another collector holds the data dir', async (program, command, executable) => {
    const config = writeConfig(temp.dir, MINIMAL);
    const first = await startCollector(['--config', config, '--port', '0', '--data-dir', `${temp.dir}/d`]);
    const port = new URL(first.url).port;
    const taken = await runCli([...command, '--config', config, '--port', port, '--data-dir', `${temp.dir}/other`], { executable });
    expect(taken).toMatchObject({ code: 1, stdout: '' });
    expect(taken.stderr).toMatch(new RegExp(`^${program}: cannot start: .*127\\.0\\.0\\.1:${port} is already in use`));
    const locked = await runCli([...command, '--config', config, '--port', '0', '--data-dir', `${temp.dir}/d`], { executable });
    expect(locked).toMatchObject({ code: 1, stdout: '' });
    expect(locked.stderr).toMatch(new RegExp(`^${program}: cannot start: .*is in use by process ${first.child.pid}`));
  });

  it('exits 1 naming the database, without its password, when the --store cannot be reached', async () => {
    // No waiting for the database (serve-postgres-start.test.ts covers the wait).
    const result = await runCli(['serve', '--config', writeConfig(temp.dir, { ...MINIMAL, postgres: { startTimeout: 0 } }), '--port', '0', '--store', 'postgres://me:s3cret@127.0.0.1:1/analytics']);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('cannot start: Cannot open the PostgreSQL store postgres://me:***@127.0.0.1:1/analytics');
    expect(result.stderr).not.toContain('s3cret');
  });

  it('refuses deletions with 403 when the config has no adminToken (no credentials would do)', async () => {
    const collector = await startCollector(['--config', writeConfig(temp.dir, MINIMAL), '--port', '0', '--data-dir', `${temp.dir}/d`]);
    const res = await postJson(`${collector.url}/v1/deletions`, { userId: 'u' }, { authorization: 'Bearer anything' });
    expect(res).toMatchObject({ status: 403, body: { error: expect.stringContaining('adminToken') } });
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
