import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpResponse } from 'msw';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Analytics, DeadLetterError, type Message } from '../../src/index.js';
import { runCli } from '../../../../test/helpers/cli.js';
import { client, recordEvents, track } from '../../../../test/helpers/client.js';
import { mockEndpoint, silentEndpoint } from '../../../../test/helpers/endpoint.js';
import { useMockServer } from '../../../../test/helpers/msw-lifecycle.js';
import { startSink } from '../../../../test/helpers/sink.js';
import { mountTmpfs } from '../../../../test/helpers/tmpfs.js';

useMockServer();

let dir: string;
let files = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dead-letter-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const freshFile = () => join(dir, `undelivered-${++files}.ndjson`);

async function readLines(file: string): Promise<Message[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Message);
}

describe('deadLetter', () => {
  it('keeps every message not delivered, and `import` re-sends each exactly once (endpoint down -> file -> import)', async () => {
    // A real endpoint that is down: a port nothing listens on any more.
    const down = await startSink();
    await down.close();
    const file = freshFile();
    const analytics = new Analytics('wk', { endpoint: down.url, deadLetter: file, flushAt: 2, maxQueueSize: 2, maxRetries: 1, minRetryDelay: 1 });
    const failed = recordEvents(analytics, 'failed');
    const drops = recordEvents(analytics, 'drop');
    analytics.on('error', () => {});

    analytics.track({ ...track(0), timestamp: '2024-03-01T12:00:00.000Z' });
    analytics.identify({ userId: 'user-1', traits: { name: 'Zoë' } });
    analytics.track(track(2)); // the queue holds maxQueueSize (2): dropped
    const closing = analytics.close();
    analytics.page({ userId: 'user-3', name: 'Late' }); // after close(): dropped
    expect(await closing).toEqual({ delivered: 0, failed: 2, dropped: 2 });

    // close() resolved: the file is complete, each line the message as it would have been sent.
    const lines = await readLines(file);
    const notDelivered = [...drops.map((drop) => drop.message), ...failed.flatMap((event) => event.messages)];
    expect(lines).toEqual(notDelivered);
    expect(lines.map((m) => m.userId)).toEqual(['user-2', 'user-3', 'user-0', 'user-1']);
    expect(lines[2]).toMatchObject({ timestamp: '2024-03-01T12:00:00.000Z', context: { library: { name: 'batched-analytics' } } });

    const sink = await startSink();
    try {
      const result = await runCli(['import', file, '--write-key', 'wk', '--endpoint', sink.url]);
      expect(result.stdout).toMatch(/sent +4\n/);
      expect(result.code).toBe(0);
      expect(sink.messages.map(({ messageId, timestamp, type }) => ({ messageId, timestamp, type }))).toEqual(
        lines.map(({ messageId, timestamp, type }) => ({ messageId, timestamp, type })),
      );
    } finally {
      await sink.close();
    }
  });

  it('keeps the messages still queued or in flight at the close() deadline', async () => {
    vi.useFakeTimers();
    silentEndpoint();
    const file = freshFile();
    const analytics = client({ deadLetter: file, flushAt: 2, maxInFlight: 1 });
    for (let n = 0; n < 5; n++) analytics.track({ ...track(n), messageId: `m-${n}` });
    const closing = analytics.close({ timeout: 1_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await closing).toEqual({ delivered: 0, failed: 5, dropped: 0 });

    expect((await readLines(file)).map((m) => m.messageId).sort()).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes nothing for delivered messages, nor for messages a beforeSend hook dropped', async () => {
    mockEndpoint();
    const file = freshFile();
    const analytics = client({ deadLetter: file, beforeSend: (message) => (message.userId === 'user-1' ? null : message) });
    analytics.track(track(1));
    analytics.track(track(2));
    expect(await analytics.close()).toEqual({ delivered: 1, failed: 0, dropped: 1 });
    expect(await readLines(file)).toEqual([]);
  });

  it('reports a file it cannot write as an error event, and close() still resolves', async () => {
    mockEndpoint(() => new HttpResponse(null, { status: 400 }));
    const file = join(dir, 'no-such-dir', 'undelivered.ndjson');
    const analytics = client({ deadLetter: file });
    const errors = recordEvents(analytics, 'error');
    analytics.track(track(1));
    expect(await analytics.close()).toEqual({ delivered: 0, failed: 1, dropped: 0 });

    const deadLetterError = errors.find((error) => error instanceof DeadLetterError);
    expect(deadLetterError).toMatchObject({ code: 'ERR_DEAD_LETTER', path: file, count: 1, cause: expect.objectContaining({ code: 'ENOENT' }) });
  });

  it('leaves only whole lines when the disk fills during a write: the next write starts on a line of its own', async (context) => {
    const disk = mountTmpfs('1m');
    if (typeof disk === 'string') return context.skip(disk);
    const sink = await startSink({ idsOnly: true });
    try {
      const file = join(disk.dir, 'data', 'undelivered.ndjson');
      // One call sent; each later one dropped (a full queue, then a closed client) and written to the dead letter.
      const analytics = new Analytics('wk', { endpoint: sink.url, deadLetter: file, maxQueueSize: 1, flushAt: 1 });
      const errors = recordEvents(analytics, 'error');
      analytics.on('drop', () => {});
      analytics.track(track(0));
      disk.fill(4096);
      // About 20 KB of lines, of which one page fits.
      for (let n = 1; n <= 20; n++) analytics.track({ ...track(n), properties: { pad: 'x'.repeat(1_000) } });
      await vi.waitFor(() => expect(errors.some((error) => error instanceof DeadLetterError)).toBe(true));
      disk.drain();
      const closing = analytics.close();
      analytics.track(track(21));
      expect(await closing).toEqual({ delivered: 1, failed: 0, dropped: 21 });

      const lost = errors.filter((error) => error instanceof DeadLetterError).reduce((sum, error) => sum + (error as DeadLetterError).count, 0);
      expect(lost).toBeGreaterThan(0);
      const lines = await readLines(file); // throws on a line that is not JSON
      expect(lines.length + lost).toBe(21);
      expect(lines.at(-1)?.userId).toBe('user-21');
    } finally {
      await sink.close();
      disk.unmount();
    }
  });

  it('starts its lines on a line of their own after a line a crash cut short', async () => {
    const file = freshFile();
    await writeFile(file, '{"type":"track","userId":"cut sho');
    const analytics = client({ deadLetter: file, maxQueueSize: 1, flushAt: 1 });
    analytics.on('drop', () => {});
    const closing = analytics.close();
    analytics.track(track(1)); // after close(): dropped, to the dead letter
    await closing;
    const [cut, line, end] = (await readFile(file, 'utf8')).split('\n');
    expect(cut).toBe('{"type":"track","userId":"cut sho');
    expect(JSON.parse(line!)).toMatchObject({ userId: 'user-1' });
    expect(end).toBe('');
  });

  it('refuses a deadLetter that is not a file path, naming the option', () => {
    expect(() => client({ deadLetter: '' })).toThrow(expect.objectContaining({ name: 'ConfigError', option: 'deadLetter' }));
  });
});
