// The live debugger's history: HistoryFile alone, then through the real CLI across a restart.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { Analytics } from 'batched-analytics';
import type { EventView } from '../../src/debugger/views.js';
import { APPEND_DELAY, type HistoryEntry, HistoryFile } from '../../src/debugger/history.js';
import { Reporter } from '../../src/config/report.js';
import { recordingLogger } from '../observe/recording-logger.js';
import { startCollector, stopAll, tempDir, waitFor, watchEvents, writeConfig } from '../../../../test/helpers/collector.js';
import { startLoopback } from '../../../../test/helpers/loopback.js';

const temp = tempDir();
const report = new Reporter(recordingLogger());
afterAll(async () => {
  await stopAll();
  temp.remove();
});

const view = (id: string, status: EventView['status']): EventView => ({
  id,
  receivedAt: new Date(0).toISOString(),
  source: 'web',
  origin: 'api',
  message: { type: 'track', event: id },
  routes: [],
  status,
  webhooks: [],
});

describe('HistoryFile', () => {
  it('keeps the latest state of each event across a reopen, at most `retention`, oldest first', async () => {
    const dir = path.join(temp.dir, 'unit');
    const first = new HistoryFile(dir, 3, report);
    expect(await first.open()).toEqual([]);
    for (const id of ['a', 'b', 'c', 'd']) first.record({ view: view(id, 'failed') });
    first.record({ view: view('b', 'delivered') });
    await first.close();

    const again = await new HistoryFile(dir, 3, report).open();
    expect(again.map((entry) => [entry.view.id, entry.view.status])).toEqual([['c', 'failed'], ['d', 'failed'], ['b', 'delivered']]);
    // Opening rewrote the file with only what is kept.
    expect(readFileSync(path.join(dir, 'history.ndjson'), 'utf8').trim().split('\n')).toHaveLength(3);
  });

  it('reopens in the order the events arrived, as the page showed them, not the order they settled in', async () => {
    const dir = path.join(temp.dir, 'order');
    const first = new HistoryFile(dir, 2, report);
    await first.open();
    // Accepted in one millisecond (one batch), in this order; settled in another.
    const at = (id: string, arrived: number) => ({ view: { ...view(id, 'delivered'), receivedAt: new Date(5).toISOString() }, arrived });
    for (const entry of [at('second', 5_001), at('third', 5_002), at('first', 5_000)]) first.record(entry);
    await first.close();
    expect((await new HistoryFile(dir, 2, report).open()).map((entry) => entry.view.id)).toEqual(['second', 'third']);
  });

  it('skips a line cut short by a crash', async () => {
    const dir = path.join(temp.dir, 'crash');
    const history = new HistoryFile(dir, 10, report);
    await history.open();
    history.record({ view: view('a', 'failed') });
    await history.close();
    writeFileSync(path.join(dir, 'history.ndjson'), `${readFileSync(path.join(dir, 'history.ndjson'), 'utf8')}{"view":{"id":"cut`);
    const reopened = new HistoryFile(dir, 10, report);
    expect((await reopened.open()).map((entry) => entry.view.id)).toEqual(['a']);
    reopened.record({ view: view('b', 'failed') });
    await reopened.close();
    expect((await new HistoryFile(dir, 10, report).open()).map((entry) => entry.view.id)).toEqual(['a', 'b']);
  });

  it('compaction keeps the newest `retention` lines, with what was recorded before it: the file stops growing', async () => {
    const dir = path.join(temp.dir, 'compact');
    const history = new HistoryFile(dir, 3, report);
    await history.open();
    const lines = () => readFileSync(path.join(dir, 'history.ndjson'), 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as HistoryEntry).view.id);
    for (const id of ['a', 'b', 'c', 'd']) history.record({ view: view(id, 'delivered') });
    await history.close();
    history.record({ view: view('e', 'delivered') });
    history.compact();
    history.record({ view: view('f', 'delivered') });
    await history.close();
    expect(lines()).toEqual(['c', 'd', 'e', 'f']);
  });
});

describe('HistoryFile appends', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('what was recorded within a quarter second as one append, without waiting for close()', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const dir = path.join(temp.dir, 'delay');
    const history = new HistoryFile(dir, 10, report);
    await history.open();
    const file = path.join(dir, 'history.ndjson');
    const kept = () => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as HistoryEntry).view.id);
    history.record({ view: view('a', 'delivered') });
    await vi.advanceTimersByTimeAsync(APPEND_DELAY - 1);
    history.record({ view: view('b', 'failed') });
    // 100 ms of real time for a write queued too early to land (Date is not faked).
    for (const until = Date.now() + 100; Date.now() < until; ) await new Promise((resolve) => setImmediate(resolve));
    expect(kept()).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    vi.useRealTimers();
    await waitFor(() => kept().length === 2, 'both lines');
    expect(kept()).toEqual(['a', 'b']);
    await history.close();
  });
});

describe('the history through the CLI', () => {
  it('shows a restarted collector the settled events of the previous run, and pages back past the live 200', async () => {
    const receiver = await startLoopback();
    const config = writeConfig(temp.dir, {
      sources: [{ name: 'web', writeKey: 'wk_web', destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } }],
    });
    const args = ['--config', config, '--port', '0', '--data-dir', path.join(temp.dir, 'data')];
    const first = await startCollector(args);
    const analytics = new Analytics('wk_web', { endpoint: first.url, flushAt: 100 });
    for (let n = 0; n < 250; n += 1) analytics.track({ userId: 'u1', event: `Event ${n}` });
    expect(await analytics.close()).toMatchObject({ delivered: 250 });
    await waitFor(() => receiver.requests.length === 250, 'the deliveries');
    await first.stop();

    const second = await startCollector(args);
    const stream = await watchEvents(second.url);
    await waitFor(() => stream.latest.size === 200, 'the latest 200 on the stream');
    const streamed = [...stream.latest.values()];
    expect(streamed.every((event) => event.status === 'delivered')).toBe(true);
    expect(streamed.at(-1)!.message.event).toBe('Event 249');
    stream.close();

    const older = await fetch(`${second.url}/history?before=${streamed[0]!.id}&limit=500`);
    const page = (await older.json()) as { events: EventView[]; more: boolean };
    expect(page.more).toBe(false);
    expect(page.events.map((event) => event.message.event)).toEqual(Array.from({ length: 50 }, (_, n) => `Event ${49 - n}`));
    expect((await fetch(`${second.url}/history?before=${streamed[0]!.id}&limit=501`)).status).toBe(400);
    expect((await fetch(`${second.url}/history?limit=0`)).status).toBe(400);
    await second.stop();
    await receiver.close();
  }, 60_000);
});
