// `serve --store postgres://…` started before its database, as containers often come up: it
// listens at once (`/healthz` 200, `/readyz` 503 with the reason), retries with backoff, logging
// each try, and serves once the database is up; it gives up after `postgres.startTimeout`. The real
// executable and a throwaway cluster, stopped before the start and started mid-run.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startCli } from '../../../../test/helpers/cli.js';
import { basic, builtCli, postJson, startCollector, stopAll, tempDir, writeConfig } from '../../../../test/helpers/collector.js';
import { POSTGRES_SKIP, useThrowawayCluster } from '../../../../test/helpers/postgres.js';
import { useReceivers } from '../../../../test/helpers/receiver.js';

const cluster = useThrowawayCluster();
const temp = tempDir();
const receiver = useReceivers();
afterEach(stopAll);
afterAll(() => temp.remove());

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const config = (url: string, postgres: Record<string, number>, store?: string) => ({
  sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url }] } } }],
  postgres: { connectTimeout: 500, ...postgres },
  ...(store === undefined ? {} : { store }),
});

it('exits 1 after postgres.startTimeout when the database never comes up, having logged each try', async () => {
  // Nothing listens on port 1: every try is refused at once.
  const file = writeConfig(temp.dir, config('http://127.0.0.1:9/hook', { startTimeout: 1_500 }), 'never.json');
  const started = Date.now();
  const cli = startCli(['serve', '--config', file, '--port', '0', '--store', 'postgres://collector:s3cret@127.0.0.1:1/analytics']);
  await cli.stderrMatches(/the store is not available yet \(try 1\)/);
  const firstTry = Date.now();
  const result = { code: await cli.exit, stderr: cli.stderr() };
  const exited = Date.now();
  expect(result.code).toBe(1);
  expect(exited - started).toBeGreaterThanOrEqual(1_500);
  // It gives up at its startTimeout, timed from its first try (Node's cold start, slow on a busy
  // machine, is not counted): well before twice that (the default is a minute).
  expect(exited - firstTry).toBeLessThan(2 * 1_500);
  const tries = result.stderr.match(/ WARN collector: the store is not available yet \(try \d+\)/g) ?? [];
  expect(tries.length).toBeGreaterThanOrEqual(2);
  expect(result.stderr).toMatch(/cannot start: Cannot open the PostgreSQL store postgres:\/\/collector:\*\*\*@127\.0\.0\.1:1\/analytics/);
  expect(result.stderr).not.toContain('s3cret');
});

it('stops waiting on SIGTERM: exit 1 at once, as a start that failed', async () => {
  const file = writeConfig(temp.dir, config('http://127.0.0.1:9/hook', { startTimeout: 30_000 }), 'stopped-wait.json');
  const cli = startCli(['serve', '--config', file, '--port', '0', '--store', 'postgres://collector@127.0.0.1:1/analytics']);
  try {
    // Signalled as its fifth try's 4 s pause begins (each pause doubles from 250 ms): stopping
    // at once is then told from waiting the pause out by seconds, on a busy machine too.
    await cli.stderrMatches(/the store is not available yet \(try 5\): .*; trying again in 4000 ms/);
    const stopping = Date.now();
    cli.child.kill('SIGTERM');
    expect(await cli.exit).toBe(1);
    expect(Date.now() - stopping).toBeLessThan(4_000);
    expect(cli.stderr()).toMatch(/cannot start: Cannot open the PostgreSQL store/);
  } finally {
    cli.child.kill('SIGKILL');
  }
});

describe.skipIf(POSTGRES_SKIP !== undefined)(`serve --store, started before the database${POSTGRES_SKIP ? ` skipped: ${POSTGRES_SKIP}` : ''}`, () => {
  it('waits for a database that is down at start: /healthz 200, /readyz 503 meanwhile; serves and delivers once it is up', async () => {
    const database = await cluster().createDatabase();
    const hooks = await receiver();
    await cluster().shutDown();
    const port = await freePort();
    const file = writeConfig(temp.dir, config(hooks.url, { startTimeout: 30_000 }, database), 'waits.json');
    const child = spawn(process.execPath, [builtCli(), 'serve', '--config', file, '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const base = `http://127.0.0.1:${port}`;
    try {
      await expect.poll(async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.status, { timeout: 5_000, interval: 50 }).toBe(200);
      // 503 from the first answer on: first while the first try runs, then with why it failed.
      const readiness = async () => {
        const readyz = await fetch(`${base}/readyz`);
        return { status: readyz.status, body: (await readyz.json()) as unknown };
      };
      expect(await readiness()).toMatchObject({ status: 503, body: { ready: false, reason: expect.stringMatching(/^starting: /) } });
      await expect
        .poll(readiness, { timeout: 5_000, interval: 50 })
        .toEqual({ status: 503, body: { ready: false, reason: expect.stringMatching(/^starting: the store is not available yet: /) } });
      // Ingestion cannot record yet: refused as during an outage, not accepted and lost.
      const early = await postJson(`${base}/v1/track`, { userId: 'u1', event: 'early' }, { authorization: basic('wk_web') });
      expect(early.status).toBe(503);
      expect(early.headers.get('retry-after')).not.toBeNull();
      await expect.poll(() => (stderr.match(/ WARN collector: the store is not available yet \(try \d+\)/g) ?? []).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
      expect(child.exitCode).toBeNull();

      await cluster().startUp();
      await expect.poll(() => stdout, { timeout: 15_000, interval: 50 }).toBe(`${base}\n`);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      const sent = await postJson(`${base}/v1/track`, { userId: 'u1', event: 'after' }, { authorization: basic('wk_web') });
      expect(sent.status).toBe(200);
      await expect.poll(() => hooks.requests.length, { timeout: 10_000 }).toBe(1);
    } finally {
      child.kill('SIGKILL');
      await cluster().startUp().catch(() => undefined);
    }
  }, 60_000);

  it('answers /readyz 503 while a running collector\'s database is stopped, 200 once it is back', async () => {
    const database = await cluster().createDatabase();
    const hooks = await receiver();
    const collector = await startCollector(['--config', writeConfig(temp.dir, config(hooks.url, {}, database), 'ready.json'), '--port', '0']);
    expect((await fetch(`${collector.url}/readyz`)).status).toBe(200);
    await cluster().shutDown();
    try {
      const readyz = await fetch(`${collector.url}/readyz`);
      expect(readyz.status).toBe(503);
      expect(await readyz.json()).toEqual({ ready: false, reason: expect.stringMatching(/^the store does not answer: PostgreSQL: /) });
      expect((await fetch(`${collector.url}/healthz`)).status).toBe(200);
    } finally {
      await cluster().startUp();
    }
    await expect.poll(async () => (await fetch(`${collector.url}/readyz`)).status, { timeout: 15_000, interval: 200 }).toBe(200);
  }, 60_000);
});
