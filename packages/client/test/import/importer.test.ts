import { afterEach, describe, expect, it } from 'vitest';
import { Analytics, type Options } from '../../src/index.js';
import { Importer, type ImportOptions } from '../../src/import/importer.js';
import { deriveMessageId } from '../../src/import/message-id.js';
import type { Reject } from '../../src/import/rejects.js';
import { countIds, type Sink, startSink } from '../../../../test/helpers/sink.js';

let sink: Sink | undefined;
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

const track = (i: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ type: 'track', userId: `u${i}`, event: 'Imported', timestamp: `2024-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`, ...extra });

/** NDJSON of `count` valid track lines. */
const tracks = (count: number): string => Array.from({ length: count }, (_, i) => `${track(i + 1)}\n`).join('');

async function importText(
  text: string,
  options: Options = {},
  extra: Partial<ImportOptions> = {},
): Promise<{ result: Awaited<ReturnType<Importer['run']>>; rejects: Reject[]; importer: Importer; analytics: Analytics }> {
  const analytics = new Analytics('KEY', { endpoint: sink?.url ?? 'http://127.0.0.1:9', flushAt: 10, ...options });
  const rejects: Reject[] = [];
  const importer = new Importer({ source: [text], analytics, onReject: (reject) => void rejects.push(reject), ...extra });
  const result = await importer.run();
  await analytics.close();
  return { result, rejects, importer, analytics };
}

describe('Importer', () => {
  it('sends each line as its call, keeps explicit timestamps and messageIds, derives missing ids', async () => {
    sink = await startSink();
    const lines = [
      track(1),
      JSON.stringify({ type: 'identify', userId: 'u2', traits: { plan: 'pro' }, timestamp: '2023-06-01T10:00:00Z', messageId: 'mine-2' }),
      JSON.stringify({ type: 'alias', userId: 'u3', previousId: 'anon-3', timestamp: '2023-06-02T10:00:00.123Z' }),
    ];
    const { result, rejects } = await importText(`${lines.join('\n')}\n`);

    expect(rejects).toEqual([]);
    expect(result).toMatchObject({ read: 3, sent: 3, failed: 0, rejected: 0, lastSent: 3, interrupted: false });
    expect(sink.messages.map(({ type, messageId, timestamp }) => ({ type, messageId, timestamp }))).toEqual([
      { type: 'track', messageId: deriveMessageId(1, lines[0]!), timestamp: '2024-01-01T00:00:01.000Z' },
      { type: 'identify', messageId: 'mine-2', timestamp: '2023-06-01T10:00:00.000Z' },
      { type: 'alias', messageId: deriveMessageId(3, lines[2]!), timestamp: '2023-06-02T10:00:00.123Z' },
    ]);
    expect(sink.messages[1]).toMatchObject({ userId: 'u2', traits: { plan: 'pro' } });
  });

  it('reports each bad line with its number and reason, and goes on', async () => {
    sink = await startSink();
    const tooLargeOnceSent = track(9, { properties: { blob: 'z'.repeat(31_850) } });
    const input = [
      track(1),
      '{"type":"track",',
      JSON.stringify({ type: 'track', userId: 'u3' }),
      JSON.stringify({ type: 'purchase', userId: 'u4' }),
      '[1,2]',
      `{"type":"track","userId":"u6","event":"E","pad":"${'p'.repeat(33_000)}"}`,
      '   ',
      JSON.stringify({ type: 'track', userId: 'u8', event: 'E', timestamp: 'yesterday' }),
      tooLargeOnceSent,
      track(10),
    ].join('\n');
    expect(Buffer.byteLength(tooLargeOnceSent)).toBeLessThan(32_000);

    const { result, rejects } = await importText(input);

    expect(rejects.map(({ line, outcome, code }) => ({ line, outcome, code }))).toEqual([
      { line: 2, outcome: 'rejected', code: 'ERR_INVALID_JSON' },
      { line: 3, outcome: 'rejected', code: 'ERR_VALIDATION' },
      { line: 4, outcome: 'rejected', code: 'ERR_VALIDATION' },
      { line: 5, outcome: 'rejected', code: 'ERR_VALIDATION' },
      { line: 6, outcome: 'rejected', code: 'ERR_MESSAGE_TOO_LARGE' },
      { line: 8, outcome: 'rejected', code: 'ERR_VALIDATION' },
      { line: 9, outcome: 'rejected', code: 'ERR_MESSAGE_TOO_LARGE' },
    ]);
    expect(rejects[1]!.reason).toMatch(/`event`/);
    expect(rejects[2]!.reason).toMatch(/`type`.*"purchase"/);
    expect(rejects[5]!.reason).toMatch(/`timestamp`/);
    expect(rejects[1]!.text).toBe(JSON.stringify({ type: 'track', userId: 'u3' }));
    expect(result).toMatchObject({ read: 10, sent: 2, rejected: 7, blank: 1, failed: 0, lastSent: 10 });
    expect(sink.messages.map((message) => message.userId)).toEqual(['u1', 'u10']);
  });

  it('sends the same messageIds when the same input is imported again', async () => {
    sink = await startSink();
    const input = `${track(1)}\n${track(1)}\n${track(2)}\n`;
    await importText(input);
    await importText(input);

    const ids = sink.messages.map((message) => message.messageId);
    expect(ids.slice(3)).toEqual(ids.slice(0, 3));
    // Identical lines at different positions are different events.
    expect(new Set(ids.slice(0, 3)).size).toBe(3);
  });

  it('starts at fromLine, keeping the ids a full import gives those lines', async () => {
    sink = await startSink();
    await importText(tracks(6));
    const full = sink.messages.splice(0).map((message) => message.messageId);

    const { result } = await importText(tracks(6), {}, { fromLine: 4 });
    expect(sink.messages.map((message) => message.messageId)).toEqual(full.slice(3));
    expect(result).toMatchObject({ skipped: 3, read: 3, sent: 3, lastSent: 6 });
  });

  it('stops while reading past the lines before fromLine, and resumes at the same fromLine', async () => {
    sink = await startSink();
    const controller = new AbortController();
    controller.abort();
    const { result } = await importText(tracks(10), {}, { fromLine: 8, signal: controller.signal });
    expect(result).toMatchObject({ interrupted: true, skipped: 0, read: 0, lastSent: 7 });
    expect(sink.requests()).toBe(0);
  });

  it('sends nothing from a fromLine past the end, and says the input ends at its last line', async () => {
    sink = await startSink();
    const { result } = await importText(tracks(6), {}, { fromLine: 50 });
    expect(result).toMatchObject({ skipped: 6, read: 0, lastSent: 6 });
    expect(sink.requests()).toBe(0);
  });

  it('reports a line that fails to deliver and keeps lastSent below it', async () => {
    sink = await startSink({ status: (batch) => (batch.some((message) => message.userId === 'u3') ? 400 : 200) });
    const { result, rejects } = await importText(tracks(5), { flushAt: 1, maxRetries: 0 });

    expect(result).toMatchObject({ sent: 4, failed: 1, lastSent: 2 });
    expect(rejects).toEqual([
      { line: 3, outcome: 'failed', code: 'ERR_HTTP', reason: expect.stringMatching(/400/), messageId: expect.any(String) },
    ]);
    expect(sink.messages).toHaveLength(4);
  });

  it('never holds more than maxQueueSize lines against a slow endpoint, and drops none', async () => {
    let importer: Importer | undefined;
    let peak = 0;
    sink = await startSink({
      delay: 1,
      status: () => {
        const { read, sent, failed, rejected, blank } = importer!.counts;
        peak = Math.max(peak, read - sent - failed - rejected - blank);
        return 200;
      },
    });
    const analytics = new Analytics('KEY', { endpoint: sink.url, flushAt: 10, maxQueueSize: 50, maxInFlight: 2 });
    importer = new Importer({ source: [tracks(1_000)], analytics });
    const result = await importer.run();

    expect(await analytics.close()).toEqual({ delivered: 1_000, failed: 0, dropped: 0 });
    expect(result).toMatchObject({ read: 1_000, sent: 1_000, lastSent: 1_000 });
    expect(peak).toBeLessThanOrEqual(50);
    expect(peak).toBeGreaterThan(10);
    expect(countIds(sink.messages).size).toBe(1_000);
  });

  it('stops reading when the signal aborts while the endpoint stalls, and still sends what it read', async () => {
    sink = await startSink();
    sink.hold();
    const controller = new AbortController();
    const analytics = new Analytics('KEY', { endpoint: sink.url, flushAt: 2, maxQueueSize: 4, maxInFlight: 1 });
    const importer = new Importer({ source: [tracks(20)], analytics, signal: controller.signal });
    const running = importer.run();
    await sink.until(() => sink!.requests() === 1);

    controller.abort();
    sink.release();
    const result = await running;
    await analytics.close();

    expect(result).toMatchObject({ interrupted: true, read: 4, sent: 4, lastSent: 4 });
    expect(sink.messages.map((message) => message.userId)).toEqual(['u1', 'u2', 'u3', 'u4']);
  });

  it('validates without sending through a disabled client (dry run)', async () => {
    sink = await startSink();
    const { result } = await importText(`${tracks(3)}{"type":"track"}\n`, { disable: true });

    expect(result).toMatchObject({ read: 4, sent: 3, rejected: 1, lastSent: 4 });
    expect(sink.requests()).toBe(0);
  });

  it('stops at a read error, sends what it read, and tells where to resume', async () => {
    sink = await startSink();
    const analytics = new Analytics('KEY', { endpoint: sink.url });
    async function* failing(): AsyncGenerator<string> {
      yield tracks(3);
      throw new Error('EIO: i/o error, read');
    }
    const result = await new Importer({ source: failing(), analytics }).run();
    await analytics.close();

    expect(result).toMatchObject({ read: 3, sent: 3, lastSent: 3, interrupted: false });
    expect(result.readError?.message).toMatch(/EIO/);
  });
});
