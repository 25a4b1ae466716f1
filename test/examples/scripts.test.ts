// The examples run as their headers document: `node examples/<name>.mjs`, configured by WRITE_KEY
// and ANALYTICS_ENDPOINT, against real loopback endpoints.
import { execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sink, startSink } from '../helpers/sink.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

async function runExample(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  const { WRITE_KEY: _key, ANALYTICS_ENDPOINT: _endpoint, ...inherited } = process.env;
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, args, { cwd: root, env: { ...inherited, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

let sink: Sink;
/** Refuses every batch: a permanent failure, reported at once. */
let refusing: Sink;
beforeAll(async () => {
  sink = await startSink();
  refusing = await startSink({ status: () => 400 });
});
afterAll(async () => {
  await sink.close();
  await refusing.close();
});

describe.each([
  ['examples/script.mjs', 3],
  ['examples/historical-import.mjs', 12],
])('%s', (example, calls) => {
  it('delivers its calls to ANALYTICS_ENDPOINT and exits 0', async () => {
    const before = sink.messages.length;
    const result = await runExample([example], { WRITE_KEY: 'wk_example', ANALYTICS_ENDPOINT: sink.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`delivered: ${calls}, failed: 0, dropped: 0`);
    expect(sink.messages.length - before).toBe(calls);
  });

  it('prints one line, not a stack trace, without a write key, and exits 2', async () => {
    const result = await runExample([example], { ANALYTICS_ENDPOINT: sink.url });
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining('Set WRITE_KEY')]);
  });

  it('exits 1 when delivery failed', async () => {
    const result = await runExample([example], { WRITE_KEY: 'wk_example', ANALYTICS_ENDPOINT: refusing.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('delivery failed');
  });
});

describe('examples/http-server.mjs', () => {
  // Ctrl-C in a terminal is SIGINT; an orchestrator sends SIGTERM: both must drain the queue.
  it.each(['SIGINT', 'SIGTERM'] as const)('delivers what it recorded when stopped with %s, then exits 0', async (signal) => {
    const before = sink.messages.length;
    const { WRITE_KEY: _key, ANALYTICS_ENDPOINT: _endpoint, ...inherited } = process.env;
    const child = spawn(process.execPath, ['examples/http-server.mjs'], {
      cwd: root,
      env: { ...inherited, WRITE_KEY: 'wk_example', ANALYTICS_ENDPOINT: sink.url, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const match = /listening on (\S+)/.exec(line);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code} before listening`)));
    });
    for (const user of ['u1', 'u2']) expect((await fetch(`${url}/orders`, { method: 'POST', headers: { 'x-user-id': user } })).status).toBe(201);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    expect(await exited).toBe(0);
    expect(sink.messages.slice(before).map((message) => message.userId)).toEqual(['u1', 'u2']);
  });
});
