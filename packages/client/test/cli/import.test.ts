import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deriveMessageId } from '../../src/import/message-id.js';
import { runCli, startCli } from '../../../../test/helpers/cli.js';
import { countIds, type Sink, startSink } from '../../../../test/helpers/sink.js';
import { startLoopback } from '../../../../test/helpers/loopback.js';

// These tests run the built executable (dist/cli.js) as a user would, against a loopback endpoint.

const EXAMPLE = fileURLToPath(new URL('../../../../examples/import.ndjson', import.meta.url));

let dir: string;
let sink: Sink | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'import-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

const USER_AGENT = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';

/** A realistic line of about 310 bytes. */
const trackLine = (i: number): string =>
  JSON.stringify({
    type: 'track',
    userId: `u${i % 500}`,
    event: 'Order Completed',
    properties: { orderId: `o-${i}`, total: i % 97, currency: 'EUR' },
    context: { ip: `10.0.${i % 250}.${i % 200}`, userAgent: USER_AGENT },
    timestamp: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
  });

/** Writes `count` track lines to a file, streaming, and returns its path. */
async function writeTracks(name: string, count: number): Promise<string> {
  const path = join(dir, name);
  const out = createWriteStream(path);
  for (let start = 1; start <= count; start += 10_000) {
    let chunk = '';
    for (let i = start; i < start + 10_000 && i <= count; i++) chunk += `${trackLine(i)}\n`;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
  return path;
}

const lastSent = (stdout: string): number => Number(/^Last line fully sent: (\d+)$/m.exec(stdout)?.[1]);
const MiB = 1024 * 1024;
/** The V8 heap cap of the flat-memory test, in MiB: below the size of its input file. */
const HEAP_CAP_MIB = 40;
const peakRss = (stdout: string): number => Number(/^ {2}peak RSS +([\d.]+) MiB$/m.exec(stdout)?.[1]);
/** A count of the summary: `  sent    1,000` → 1000. */
const row = (stdout: string, label: string): number => Number(new RegExp(`^ {2}${label} +([\\d,]+)`, 'm').exec(stdout)?.[1]?.replaceAll(',', ''));

describe('batched-analytics import (built executable)', () => {
  it('sends the example file with its timestamps and messageIds, and exits 0', async () => {
    sink = await startSink();
    const { code, stdout, stderr } = await runCli(['import', EXAMPLE, '--write-key', 'K', '--endpoint', sink.url]);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Import of .*import\.ndjson finished after .*: 12 lines\.\n/);
    expect(row(stdout, 'sent')).toBe(12);
    expect(lastSent(stdout)).toBe(12);
    const lines = (await readFile(EXAMPLE, 'utf8')).trimEnd().split('\n');
    expect(sink.messages.map(({ messageId, timestamp }) => ({ messageId, timestamp }))).toEqual(
      lines.map((line, i) => {
        const call = JSON.parse(line) as { messageId?: string; timestamp: string };
        return { messageId: call.messageId ?? deriveMessageId(i + 1, line), timestamp: call.timestamp };
      }),
    );
  });

  it('reports bad lines by number, writes them to --rejects, sends the rest, and exits 1', async () => {
    sink = await startSink();
    const input = join(dir, 'bad.ndjson');
    await writeFile(input, [trackLine(1), '{oops', JSON.stringify({ type: 'track', userId: 'u' }), trackLine(4)].join('\n'));
    const rejectsPath = join(dir, 'bad.rejects.ndjson');
    const { code, stdout, stderr } = await runCli(['import', input, '--write-key', 'K', '--endpoint', sink.url, '--rejects', rejectsPath]);

    expect(code).toBe(1);
    expect(stderr).toMatch(/^line 2 rejected: Expected a JSON object, got invalid JSON: .*\nline 3 rejected: Expected `event` on a track call to be a non-empty string, got `undefined`\n$/);
    expect(stdout).toMatch(/^ {2}rejected +2 {2}see .*bad\.rejects\.ndjson$/m);
    expect(lastSent(stdout)).toBe(4);
    const records = (await readFile(rejectsPath, 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(records).toEqual([
      { line: 2, outcome: 'rejected', code: 'ERR_INVALID_JSON', reason: expect.any(String), text: '{oops' },
      { line: 3, outcome: 'rejected', code: 'ERR_VALIDATION', reason: expect.stringContaining('`event`'), text: '{"type":"track","userId":"u"}' },
    ]);
    expect(sink.messages.map((message) => message.messageId)).toEqual([
      deriveMessageId(1, trackLine(1)),
      deriveMessageId(4, trackLine(4)),
    ]);
  });

  it('exits 1 when lines fail to deliver, and tells where to resume', async () => {
    sink = await startSink({ status: () => 400 });
    const input = await writeTracks('refused.ndjson', 3);
    const rejectsPath = join(dir, 'refused.rejects.ndjson');
    const { code, stdout, stderr } = await runCli(['import', input, '--write-key', 'K', '--endpoint', sink.url, '--rejects', rejectsPath]);

    expect(code).toBe(1);
    expect(stderr).toBe('3 messages failed to deliver: Request failed with status 400: refused\n');
    expect(row(stdout, 'failed')).toBe(3);
    expect(stdout).toMatch(/\nLast line fully sent: 0\nResume with --from-line 1; /);
    const records = (await readFile(rejectsPath, 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(records.map(({ line, outcome, code: errorCode, messageId }) => ({ line, outcome, code: errorCode, messageId }))).toEqual(
      [1, 2, 3].map((line) => ({ line, outcome: 'failed', code: 'ERR_HTTP', messageId: deriveMessageId(line, trackLine(line)) })),
    );
  });

  it('checks every line without sending with --dry-run', async () => {
    sink = await startSink();
    const good = await runCli(['import', EXAMPLE, '--dry-run', '--endpoint', sink.url]);
    expect(good.code).toBe(0);
    expect(row(good.stdout, 'valid')).toBe(12);
    expect(good.stdout).toMatch(/\nDry run: nothing was sent\.\nLast line fully checked: 12\n$/);

    const input = join(dir, 'dry-bad.ndjson');
    await writeFile(input, `${trackLine(1)}\n{"type":"page"}\n`);
    const bad = await runCli(['import', input, '--dry-run', '--endpoint', sink.url]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('line 2 rejected: Expected `userId` or `anonymousId` on a page call, got neither\n');
    expect(sink.requests()).toBe(0);
  });

  it('prints plain progress lines, without terminal codes, when stderr is not a terminal', async () => {
    sink = await startSink();
    sink.hold();
    const input = await writeTracks('progress.ndjson', 3_000);
    const cli = startCli(['import', input, '--write-key', 'K', '--endpoint', sink.url, '--max-queue-size', '1000', '--progress-interval', '20']);
    // Held by the endpoint, the import waits with 1,000 lines read; the progress lines say so.
    await cli.stderrMatches(/^progress: 1,000 read, 0 sent, 0 failed, 0 rejected, 0 lines\/s, 0%$/m);
    sink.release();

    expect(await cli.exit).toBe(0);
    const lines = cli.stderr().trimEnd().split('\n');
    for (const line of lines) {
      expect(line).toMatch(/^progress: [\d,]+ read, [\d,]+ sent, 0 failed, 0 rejected, [\d,]+ lines\/s, \d+%(, ETA [\dhms.]+)?$/);
    }
    expect(cli.stderr()).not.toContain('\u001b');
    expect(lastSent(cli.stdout())).toBe(3_000);
  });

  it('on Ctrl-C stops reading, sends what it read, exits 130; --from-line then sends the rest, each line once', async () => {
    sink = await startSink();
    sink.hold();
    const input = await writeTracks('interrupted.ndjson', 5_000);
    const args = ['import', input, '--write-key', 'K', '--endpoint', sink.url, '--max-queue-size', '1000'];
    const cli = startCli([...args, '--progress-interval', '20']);
    await cli.stderrMatches(/^progress: 1,000 read/m);

    cli.child.kill('SIGINT');
    await cli.stderrMatches(/^Interrupted: reading stopped; sending the lines read/m);
    sink.release();
    expect(await cli.exit).toBe(130);
    expect(cli.stdout()).toMatch(/^Import of .* interrupted after .*: stopped reading after line 1,000\.\n/);
    expect(row(cli.stdout(), 'sent')).toBe(1_000);
    expect(lastSent(cli.stdout())).toBe(1_000);
    expect(cli.stdout()).toMatch(/\nResume with --from-line 1001; /);
    expect(sink.messages).toHaveLength(1_000);

    const resumed = await runCli([...args, '--from-line', '1001']);
    expect(resumed.code).toBe(0);
    expect(row(resumed.stdout, 'sent')).toBe(4_000);
    expect(row(resumed.stdout, 'skipped')).toBe(1_000);
    expect(lastSent(resumed.stdout)).toBe(5_000);
    const counts = countIds(sink.messages);
    expect(sink.messages).toHaveLength(5_000);
    expect(counts.size).toBe(5_000);
    for (let line = 1; line <= 5_000; line++) expect(counts.get(deriveMessageId(line, trackLine(line)))).toBe(1);
  });

  it('on a second Ctrl-C stops waiting for a stalled endpoint: the lines not delivered are failed', async () => {
    sink = await startSink();
    sink.hold();
    const input = await writeTracks('stalled.ndjson', 2_000);
    const cli = startCli(['import', input, '--write-key', 'K', '--endpoint', sink.url, '--max-queue-size', '1000', '--progress-interval', '20']);
    await cli.stderrMatches(/^progress: 1,000 read/m);

    cli.child.kill('SIGINT');
    await cli.stderrMatches(/^Interrupted: reading stopped/m);
    cli.child.kill('SIGINT');

    expect(await cli.exit).toBe(130);
    expect(cli.stderr()).toMatch(/^Interrupted again: lines not delivered yet are reported failed$/m);
    expect(row(cli.stdout(), 'failed')).toBe(1_000);
    expect(lastSent(cli.stdout())).toBe(0);
    expect(cli.stdout()).toMatch(/\nResume with --from-line 1; /);
    expect(sink.messages).toEqual([]);
  });

  it('imports 200,000 lines in flat memory: a V8 heap smaller than the file suffices', { timeout: 60_000 }, async () => {
    sink = await startSink({ idsOnly: true });
    const large = await writeTracks('200k.ndjson', 200_000);
    // The file is about 61 MiB; holding its lines would need more heap than this cap allows, so
    // the import only finishes if it streams.
    expect((await stat(large)).size / MiB).toBeGreaterThan(HEAP_CAP_MIB);
    const env = { NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MIB}` };
    const many = await runCli(['import', large, '--write-key', 'K', '--endpoint', sink.url, '--flush-at', '200'], { env });

    expect(many.code).toBe(0);
    expect(lastSent(many.stdout)).toBe(200_000);
    expect(sink.messages).toHaveLength(200_000);
    expect(countIds(sink.messages).size).toBe(200_000);
    // Measured plateaus: ~117 MiB on Node 20, ~234 MiB on Node 24 (the same at 600,000 lines).
    expect(peakRss(many.stdout)).toBeLessThan(288);
  });
  it('--max-retries and --timeout bound the time spent on an endpoint that does not answer', async () => {
    sink = await startSink();
    sink.hold();
    const input = await writeTracks('stalled.ndjson', 3);
    const started = Date.now();
    const { code, stdout, stderr } = await runCli(['import', input, '--write-key', 'K', '--endpoint', sink.url, '--max-retries', '1', '--timeout', '300']);

    expect(code).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(sink.requests()).toBe(2);
    expect(stderr).toMatch(/^attempt 1 to send 3 messages failed \(Request timed out after 300 ms\); retrying in [\d.]+s$/m);
    expect(stderr).toMatch(/^3 messages failed to deliver: Request timed out after 300 ms$/m);
    expect(row(stdout, 'failed')).toBe(3);
    sink.release();
  });

  it.each([
    ['--max-retries', 'x', 'Expected --max-retries to be an integer >= 0, got "x"'],
    ['--timeout', '0', 'Expected --timeout to be an integer >= 1 and <= 2147483647, got "0"'],
    ['--timeout', '2147483648', 'Expected --timeout to be an integer >= 1 and <= 2147483647, got "2147483648"'],
    ['--progress-interval', '2147483648', 'Expected --progress-interval to be an integer >= 1 and <= 2147483647, got "2147483648"'],
  ])('%s %s is a usage error', async (flag, value, message) => {
    const { code, stderr } = await runCli(['import', EXAMPLE, '--dry-run', flag, value]);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it.each([
    ['the same path', (input: string) => input],
    ['a path through ./', (input: string) => input.replace(/[^/]+$/, './$&')],
    ['a symlink to it', async (input: string) => {
      const link = `${input}.link`;
      await symlink(input, link);
      return link;
    }],
  ])('refuses --rejects naming the input by %s, leaving the input whole, and exits 2', async (_, rejectsOf) => {
    sink = await startSink();
    const input = join(dir, `same-${Math.random().toString(36).slice(2)}.ndjson`);
    const text = `${[trackLine(1), '{oops', trackLine(3)].join('\n')}\n`;
    await writeFile(input, text);
    const { code, stdout, stderr } = await runCli(['import', input, '--write-key', 'K', '--endpoint', sink.url, '--rejects', await rejectsOf(input)]);

    expect(code).toBe(2);
    expect(stderr).toMatch(/^batched-analytics import: Expected --rejects to be a file other than the input .*\n$/);
    expect(stdout).toBe('');
    expect(await readFile(input, 'utf8')).toBe(text);
    expect(sink.messages).toEqual([]);
  });

  it('shows a rate limit as waiting, with the time left, not as a stalled rate', async () => {
    let until = 0;
    const limited = await startLoopback((_, res) => {
      until ||= Date.now() + 2_000;
      if (Date.now() < until) {
        res.writeHead(429, { 'retry-after': '2' });
        res.end();
        return;
      }
      res.end('{"success":true}');
    });
    try {
      const input = await writeTracks('limited.ndjson', 3);
      const cli = startCli(['import', input, '--write-key', 'K', '--endpoint', limited.url, '--max-retries', '0', '--progress-interval', '100']);
      await cli.stderrMatches(/^progress: .*waiting/m);

      expect(await cli.exit).toBe(0);
      expect(cli.stderr()).toMatch(/^rate limited \(status 429\): waiting [\d.]+s before sending again$/m);
      expect(cli.stderr()).toMatch(/^progress: 3 read, 0 sent, 0 failed, 0 rejected, 0 lines\/s, 0%, waiting [\d.]+s \(rate limited\)$/m);
      expect(cli.stderr()).not.toMatch(/waiting.*ETA|ETA.*waiting/);
      expect(lastSent(cli.stdout())).toBe(3);
    } finally {
      await limited.close();
    }
  });
});
