import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpError, NetworkError } from '../../src/index.js';
import { UnheardFailures } from '../../src/client/unheard.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';

// A real script using the built client, as a user runs it: what reaches its stderr.

const run = promisify(execFile);
const script = fileURLToPath(new URL('../fixtures/failing-batches.mjs', import.meta.url));

let server: Loopback | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = undefined;
});

async function runScript(options: object, listen = false) {
  server ??= await startLoopback((_, res) => {
    res.statusCode = 400;
    res.end('{"message":"bad batch"}');
  });
  const { stdout, stderr } = await run(process.execPath, [script, server.url, JSON.stringify(options), listen ? 'listen' : ''], {
    env: { ...process.env, DEBUG: '' },
    timeout: 10_000,
  });
  return { summary: JSON.parse(stdout), stderr };
}

describe('a failure nobody listens for', () => {
  it('is written to stderr, once per kind of error', async () => {
    const { summary, stderr } = await runScript({});
    expect(summary).toEqual({ delivered: 0, failed: 3, dropped: 0 });
    // The first failure at once; the two held back when the script closes its client.
    const lines = stderr.trimEnd().split('\n');
    expect(lines).toEqual([expect.stringContaining('ERR_HTTP'), expect.stringContaining('(2 of this code in the last minute, this the latest)')]);
    expect(lines[0]).toContain('Request failed with status 400: bad batch');
    expect(lines[0]).toContain('wk#1');
    expect(lines[0]).toContain('Listen to the `error` event, or set `logger` or `silent`');
  });

  it('is not written with an error listener or with silent: true', async () => {
    for (const [options, listen] of [[{}, true], [{ silent: true }, false]] as const) {
      const { summary, stderr } = await runScript(options, listen);
      expect(summary.failed).toBe(3);
      expect(stderr).toBe('');
    }
  });
});

describe('a dropped call nobody hears of', () => {
  const fullQueue = fileURLToPath(new URL('../fixtures/full-queue.mjs', import.meta.url));

  it('is written to stderr, the first at once and the rest counted at close, without a drop listener; not with one', async () => {
    server = await startLoopback();
    const env = { ...process.env, DEBUG: '' };
    const unheard = await run(process.execPath, [fullQueue, server.url], { env, timeout: 10_000 });
    expect(JSON.parse(unheard.stdout)).toEqual({ delivered: 1, failed: 0, dropped: 4 });
    expect(unheard.stderr.trimEnd().split('\n')).toEqual([
      expect.stringContaining('ERR_QUEUE_FULL: Dropped: the queue already holds maxQueueSize (1) messages'),
      expect.stringContaining('(3 of this code in the last minute, this the latest)'),
    ]);

    const heard = await run(process.execPath, [fullQueue, server.url, 'drop'], { env, timeout: 10_000 });
    expect(JSON.parse(heard.stdout).dropped).toBe(4);
    expect(heard.stderr).toBe('');
  });

  it('names what hears a drop, a `drop` listener or a callback, and is still written with an `error` listener', async () => {
    server = await startLoopback();
    const { stdout, stderr } = await run(process.execPath, [fullQueue, server.url, 'error'], { env: { ...process.env, DEBUG: '' }, timeout: 10_000 });
    expect(JSON.parse(stdout).dropped).toBe(4);
    const lines = stderr.trimEnd().split('\n');
    expect(lines).toEqual([expect.stringContaining('ERR_QUEUE_FULL'), expect.stringContaining('ERR_QUEUE_FULL')]);
    expect(lines[0]).toContain('Listen to the `drop` event or pass the call a callback, or set `logger` or `silent`');
    expect(lines[0]).not.toContain('`error` event');
  });
});

describe('UnheardFailures', () => {
  it('writes the first failure of each code, then, when its minute ends, the latest held back with how many were', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const unheard = new UnheardFailures('wk#1', (line) => lines.push(line));
    for (let i = 0; i < 3; i += 1) unheard.report(new HttpError(400, `bad batch ${i}`), 'error');
    unheard.report(new NetworkError('POST http://x failed: ECONNREFUSED'), 'error');
    expect(lines.map((line) => line.split(':')[0])).toEqual(['batched-analytics [wk#1] ERR_HTTP', 'batched-analytics [wk#1] ERR_NETWORK']);

    // No other failure of the code comes: what was held back is written all the same.
    vi.advanceTimersByTime(59_999);
    expect(lines).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toContain('ERR_HTTP: Request failed with status 400: bad batch 2 (2 of this code in the last minute, this the latest)');
    // The next starts another minute.
    unheard.report(new HttpError(400, 'bad batch 3'), 'error');
    expect(lines).toHaveLength(3);
    vi.advanceTimersByTime(60_000);
    expect(lines[3]).toContain('bad batch 3 (1 of this code in the last minute, this the latest)');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes what it held back at once when the client closes, leaving no timer', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const unheard = new UnheardFailures('wk#1', (line) => lines.push(line));
    for (let i = 0; i < 4; i += 1) unheard.report(new HttpError(500, 'down'), 'error');
    unheard.close();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('(3 of this code in the last minute, this the latest)');
    expect(vi.getTimerCount()).toBe(0);
  });
});
