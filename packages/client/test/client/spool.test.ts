// The `spool` option with real processes: a child is killed with SIGKILL, the next one on the same
// directory sends what it left, exactly once; plus the lock, the byte bound and a full disk.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Analytics, type AnalyticsError, SpoolError, SpoolLockedError } from '../../src/index.js';
import { runCli } from '../../../../test/helpers/cli.js';
import { startLoopback } from '../../../../test/helpers/loopback.js';
import { countIds, type Received, startSink } from '../../../../test/helpers/sink.js';
import { mountTmpfs } from '../../../../test/helpers/tmpfs.js';

const CHILD = fileURLToPath(new URL('../fixtures/spool-child.mjs', import.meta.url));
const CALLS = 1_000;
const ALL_IDS = Array.from({ length: CALLS }, (_, n) => `crash-${n}`);

let dir: string;
const children: ChildProcessWithoutNullStreams[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'spool-test-'));
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function start(mode: 'queue' | 'drain', endpoint: string, count = CALLS): { child: ChildProcessWithoutNullStreams; line: Promise<string>; exit: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, [CHILD, mode, endpoint, dir, String(count)], { stdio: 'pipe' });
  children.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const line = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`child exited with ${code} before a line:\n${stderr}`)));
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, line, exit, stderr: () => stderr };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port nothing listens on: an endpoint that is down. */
async function downEndpoint(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/**
 * The ids with the runs they arrived in put back in call order. The client sends its batches in call
 * order, but up to `maxInFlight` at once, so on a busy machine a later batch can be answered first:
 * each run of consecutive calls is a batch (or batches that came in order); that every call lands in
 * exactly one run, in call order inside it, is what "sent in order" promises.
 */
function inCallOrder(ids: string[]): string[] {
  const runs: string[][] = [];
  let previous = Number.NaN;
  for (const id of ids) {
    const n = Number(id.slice('crash-'.length));
    if (n === previous + 1) runs.at(-1)!.push(id);
    else runs.push([id]);
    previous = n;
  }
  return runs.sort((a, b) => ALL_IDS.indexOf(a[0]!) - ALL_IDS.indexOf(b[0]!)).flat();
}

/** Queues the calls in a child and kills it with SIGKILL 300 ms after its last call (and once `ready` holds). */
async function queueAndKill(endpoint: string, ready: () => Promise<void> = async () => undefined): Promise<void> {
  const queuer = start('queue', endpoint);
  expect(await queuer.line).toBe('queued'); // 100 ms (spoolInterval) after the last call, on the child's timers
  await ready();
  await sleep(200);
  queuer.child.kill('SIGKILL');
  await queuer.exit;
}

/** Runs a `drain` child against a fresh sink; returns what the sink accepted and the child's summary. */
async function drain(): Promise<{ messages: Received[]; summary: { delivered: number; failed: number; dropped: number } }> {
  const sink = await startSink();
  try {
    const drainer = start('drain', sink.url);
    const summary = JSON.parse(await drainer.line);
    expect(await drainer.exit).toBe(0);
    expect(drainer.stderr()).toBe('');
    return { messages: sink.messages, summary };
  } finally {
    await sink.close();
  }
}

describe('a spool survives SIGKILL', () => {
  it('delivers every call of a process killed with the endpoint down, exactly once, and then nothing more', async () => {
    await queueAndKill(await downEndpoint());

    const second = await drain();
    expect(second.summary).toEqual({ delivered: CALLS, failed: 0, dropped: 0 });
    const counts = countIds(second.messages);
    expect(inCallOrder([...counts.keys()])).toEqual(ALL_IDS); // in call order, with the original messageIds
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // Byte for byte: characters of two, three and four bytes in UTF-8 come back as they were sent.
    expect(second.messages.filter((message) => (message.properties as { text: string }).text !== `naïve – 東京 🎉 ${(message.properties as { n: number }).n}`)).toEqual([]);

    const third = await drain();
    expect(third.summary).toEqual({ delivered: 0, failed: 0, dropped: 0 });
    expect(third.messages).toEqual([]);
    expect(readdirSync(dir)).toEqual([]); // every segment settled, the lock released
  }, 30_000);

  it('after a crash in the middle of a flush, delivers the rest: each call exactly once over both processes', async () => {
    // Answers the first six batches, then holds every later request open: the process dies with batches in flight.
    const answered: string[] = [];
    let requests = 0;
    const endpoint = await startLoopback((request, res) => {
      requests += 1;
      if (requests > 6) return;
      for (const message of (JSON.parse(request.body) as { batch: Received[] }).batch) answered.push(message.messageId);
      res.end('{"success":true}');
    });
    try {
      await queueAndKill(endpoint.url, async () => {
        while (!(answered.length === 300 && requests >= 10)) await sleep(10);
      });
    } finally {
      await endpoint.close();
    }

    const second = await drain();
    expect(second.summary).toEqual({ delivered: CALLS - 300, failed: 0, dropped: 0 });
    const counts = countIds([...answered.map((messageId) => ({ messageId, type: 'track' })), ...second.messages]);
    expect(new Set(counts.keys())).toEqual(new Set(ALL_IDS));
    expect([...counts.values()].every((n) => n === 1)).toBe(true);

    expect((await drain()).messages).toEqual([]);
  }, 30_000);

  it('counts only whole lines of a settlement file: one cut short by a crash or a full disk settles nothing', async () => {
    await queueAndKill(await downEndpoint());
    // What a write of "0\n1\n35\n" cut after its fifth byte leaves: calls 0 and 1 settled, and "3"
    // is not call 3 (still unsent) but the start of 35.
    writeFileSync(join(dir, '000000000000.acks'), '0\n1\n3');

    const second = await drain();
    expect(second.summary).toEqual({ delivered: CALLS - 2, failed: 0, dropped: 0 });
    expect(new Set(countIds(second.messages).keys())).toEqual(new Set(ALL_IDS.slice(2)));
  }, 30_000);

  it('settles after a settlement cut short without finishing it: "99" then "2" is neither call 992 nor call 99', async () => {
    await queueAndKill(await downEndpoint());
    writeFileSync(join(dir, '000000000000.acks'), '0\n1\n99'); // "99" the start of, say, 995

    // The next process sends calls 2 to 999 in batches of 50; only the one with calls 2 to 51 is
    // answered, so those (and only those) are recorded settled. Then it dies.
    const answered: string[] = [];
    const endpoint = await startLoopback((request, res) => {
      const batch = (JSON.parse(request.body) as { batch: Received[] }).batch;
      if (!batch.some((message) => message.messageId === 'crash-2')) return;
      for (const message of batch) answered.push(message.messageId);
      res.end('{"success":true}');
    });
    try {
      const second = start('drain', endpoint.url);
      second.line.catch(() => undefined); // killed before it prints its summary
      while (answered.length === 0) await sleep(10);
      await sleep(300); // the settlements' write (spoolInterval 100 ms)
      second.child.kill('SIGKILL');
      await second.exit;
    } finally {
      await endpoint.close();
    }
    expect(answered).toEqual(ALL_IDS.slice(2, 52));

    const third = await drain();
    const counts = countIds(third.messages);
    expect(new Set(counts.keys())).toEqual(new Set(ALL_IDS.slice(52)));
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  }, 30_000);
});

describe('the lock', () => {
  it('refuses a second process on a spool in use, and takes over the lock of a dead one', async () => {
    const holder = start('queue', await downEndpoint(), 1);
    await holder.line;
    let refused: unknown;
    try {
      new Analytics('wk', { spool: dir });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(SpoolLockedError);
    expect(refused).toMatchObject({ name: 'SpoolLockedError', code: 'ERR_SPOOL_LOCKED', option: 'spool', pid: holder.child.pid });

    await sleep(300); // past spoolInterval: its call is on disk
    holder.child.kill('SIGKILL');
    await holder.exit;
    const sink = await startSink({ idsOnly: true });
    try {
      const next = new Analytics('wk', { spool: dir, endpoint: sink.url, silent: true });
      expect(await next.close()).toEqual({ delivered: 1, failed: 0, dropped: 0 });
      expect(sink.messages.map((message) => message.messageId)).toEqual(['crash-0']);
    } finally {
      await sink.close();
    }
  }, 20_000);

  // What a lock file holds (its process id, then when that process started) tells a killed
  // process from a live one even once its id is someone else's: a container's next PID 1, which is
  // this process's id here, or any process after a reboot.
  it.skipIf(!existsSync('/proc/self/stat'))('takes over the lock of a killed process whose id is now another process\'s, its own included', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    try {
      for (const pid of [process.pid, other.pid!]) {
        writeFileSync(join(dir, 'lock'), `${pid}\nanother boot:1`);
        const client = new Analytics('wk', { spool: dir, silent: true });
        expect(readFileSync(join(dir, 'lock'), 'utf8').split('\n')[0]).toBe(String(process.pid));
        await client.close();
      }
      // A lock written by an earlier version holds the id alone: this process's own is not live.
      writeFileSync(join(dir, 'lock'), String(process.pid));
      await new Analytics('wk', { spool: dir, silent: true }).close();
      writeFileSync(join(dir, 'lock'), String(other.pid));
      expect(() => new Analytics('wk', { spool: dir })).toThrow(expect.objectContaining({ name: 'SpoolLockedError', pid: other.pid }));
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('refuses a second client of the same process until the first is closed', async () => {
    const first = new Analytics('wk', { spool: dir, disable: false, endpoint: await downEndpoint() });
    expect(() => new Analytics('wk', { spool: dir })).toThrow(SpoolLockedError);
    await first.close({ timeout: 0 });
    const second = new Analytics('wk', { spool: dir, silent: true });
    await second.close();
    expect(existsSync(join(dir, 'lock'))).toBe(false);
  });
});

describe('spoolInterval', () => {
  afterEach(() => vi.useRealTimers());

  it('writes a call within spoolInterval ms of it, grouped with the calls around it', async () => {
    const endpoint = await downEndpoint();
    vi.useFakeTimers();
    const analytics = new Analytics('wk', { spool: dir, spoolInterval: 50, flushAt: 100, endpoint, silent: true });
    const lines = () => (existsSync(join(dir, '000000000000.log')) ? readFileSync(join(dir, '000000000000.log'), 'utf8').split('\n').filter(Boolean) : []);
    analytics.track({ userId: 'u', event: 'First', messageId: 'first' });
    await vi.advanceTimersByTimeAsync(30);
    analytics.track({ userId: 'u', event: 'Second', messageId: 'second' });
    await vi.advanceTimersByTimeAsync(19);
    expect(lines()).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(lines().map((line) => JSON.parse(line).messageId)).toEqual(['first', 'second']);
    vi.useRealTimers();
    await analytics.close({ timeout: 0 });
  });

  it("writes each call as one line, byte for byte, over as many of the client's store chunks as a write spans", async () => {
    const endpoint = await downEndpoint();
    vi.useFakeTimers();
    const analytics = new Analytics('wk', { spool: dir, spoolInterval: 50, flushAt: 1_000, maxQueueSize: 1_000, endpoint, silent: true });
    // About 400 KB: more than one write's worth (256 KiB) and three of the store's 128 KiB chunks; a third of them not ASCII.
    const texts = Array.from({ length: 400 }, (_, n) => (n % 3 === 0 ? 'é€😀'.repeat(100) : 'a'.repeat(900 + n)));
    texts.forEach((text, n) => analytics.track({ userId: 'u', event: 'Long', messageId: `long-${n}`, properties: { text } }));
    await vi.advanceTimersByTimeAsync(50);
    const lines = readFileSync(join(dir, '000000000000.log'), 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line).properties.text)).toEqual(texts);
    expect(lines.map((line) => JSON.parse(line).messageId)).toEqual(texts.map((_, n) => `long-${n}`));
    vi.useRealTimers();
    await analytics.close({ timeout: 0 });
  });
});

describe('batched-analytics import --spool', () => {
  it('sends through the spool and leaves it empty', async () => {
    const sink = await startSink({ idsOnly: true });
    try {
      const input = join(dir, 'calls.ndjson');
      writeFileSync(input, Array.from({ length: 40 }, (_, n) => JSON.stringify({ type: 'track', userId: `u${n}`, event: 'Imported' })).join('\n'));
      const spool = join(dir, 'spool');
      const { code } = await runCli(['import', input, '--write-key', 'K', '--endpoint', sink.url, '--spool', spool]);
      expect(code).toBe(0);
      expect(sink.messages).toHaveLength(40);
      expect(readdirSync(spool)).toEqual([]);
    } finally {
      await sink.close();
    }
  });
});

describe('bounds', () => {
  it('drops calls past maxSpoolBytes with a drop event, and keeps the others', async () => {
    const sink = await startSink({ idsOnly: true });
    try {
      const analytics = new Analytics('wk', { spool: dir, endpoint: sink.url, maxSpoolBytes: 2_000, flushAt: 100, silent: true });
      const drops: string[] = [];
      analytics.on('drop', (event) => drops.push(`${event.reason}:${event.error.name}`));
      for (let n = 0; n < 30; n++) analytics.track({ userId: 'u', event: 'Bounded', properties: { n } });
      const summary = await analytics.close();
      expect(summary.dropped).toBeGreaterThan(0);
      expect(summary.delivered + summary.dropped).toBe(30);
      expect(sink.messages).toHaveLength(summary.delivered);
      expect(new Set(drops)).toEqual(new Set(['queue-full:SpoolFullError']));
    } finally {
      await sink.close();
    }
  });
});

describe('a full disk', () => {
  it('keeps the client working in memory and says so once', async (context) => {
    const disk = mountTmpfs('1m');
    if (typeof disk === 'string') return context.skip(disk);
    const sink = await startSink({ idsOnly: true });
    try {
      disk.fill();
      const errors: AnalyticsError[] = [];
      const analytics = new Analytics('wk', { spool: join(disk.dir, 'data', 'spool'), endpoint: sink.url, flushAt: 100, spoolInterval: 5 });
      analytics.on('error', (error) => errors.push(error));
      for (let round = 0; round < 5; round++) {
        for (let n = 0; n < 200; n++) analytics.track({ userId: 'u', event: 'Full', properties: { round, n, pad: 'x'.repeat(200) } });
        await sleep(20);
      }
      expect(await analytics.close()).toEqual({ delivered: 1_000, failed: 0, dropped: 0 });
      expect(sink.messages).toHaveLength(1_000);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(SpoolError);
      expect(errors[0]).toMatchObject({ code: 'ERR_SPOOL', cause: expect.objectContaining({ code: 'ENOSPC' }) });
    } finally {
      await sink.close();
      disk.unmount();
    }
  });

  it('fills in the middle of a write: the calls go on in memory, and the next process sends none of them again', async (context) => {
    const disk = mountTmpfs('1m');
    if (typeof disk === 'string') return context.skip(disk);
    const sink = await startSink({ idsOnly: true });
    const spool = join(disk.dir, 'data', 'spool');
    try {
      const errors: AnalyticsError[] = [];
      const first = new Analytics('wk', { spool, endpoint: sink.url, flushAt: 20, spoolInterval: 60_000 });
      first.on('error', (error) => errors.push(error));
      // One page left: the 20 calls' write (about 22 KB, made as the batch leaves) gets only part of them in.
      disk.fill(4096);
      for (let n = 0; n < 20; n++) first.track({ userId: 'u', event: 'Filled', messageId: `filled-${n}`, properties: { n, pad: 'x'.repeat(1_000) } });
      const log = readFileSync(join(spool, '000000000000.log'), 'utf8');
      expect(log.length).toBe(4096);
      expect(log.endsWith('\n')).toBe(false); // its last line cut short

      expect(await first.close()).toEqual({ delivered: 20, failed: 0, dropped: 0 });
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ code: 'ERR_SPOOL', cause: expect.objectContaining({ code: 'ENOSPC' }) });

      disk.drain();
      const second = new Analytics('wk', { spool, endpoint: sink.url });
      expect(await second.close()).toEqual({ delivered: 0, failed: 0, dropped: 0 });
      expect([...countIds(sink.messages).values()]).toEqual(Array.from({ length: 20 }, () => 1));
    } finally {
      await sink.close();
      disk.unmount();
    }
  });
});
