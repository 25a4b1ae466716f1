import { format } from 'node:util';
import createDebug from 'debug';
import { HttpResponse } from 'msw';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/index.js';
import { log } from '../../src/platform/log.js';
import { client, track } from '../../../../test/helpers/client.js';
import { mockEndpoint } from '../../../../test/helpers/endpoint.js';
import { useMockServer } from '../../../../test/helpers/msw-lifecycle.js';

useMockServer();

type Line = [level: 'debug' | 'info' | 'warn' | 'error', text: string];

function memoryLogger(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  return {
    lines,
    debug: (text) => lines.push(['debug', text]),
    info: (text) => lines.push(['info', text]),
    warn: (text) => lines.push(['warn', text]),
    error: (text) => lines.push(['error', text]),
  };
}

const LABEL = /^\[writ#(\d+)\] /;

describe('logger', () => {
  it('gets queueing at debug, retries at warn and given-up batches at error, each line naming the client', async () => {
    mockEndpoint(() => new HttpResponse('busy', { status: 503 }));
    const logger = memoryLogger();
    const analytics = client({ logger, maxRetries: 1, minRetryDelay: 1 });
    analytics.track(track(1));
    await analytics.flush();
    await analytics.close();

    const find = (pattern: RegExp) => logger.lines.find(([, text]) => pattern.test(text));
    expect(find(/queued track/)?.[0]).toBe('debug');
    expect(find(/retrying in \d+ ms/)?.[0]).toBe('warn');
    expect(find(/gave up on 1 messages after 2 attempt\(s\): Request failed with status 503/)?.[0]).toBe('error');
    expect(find(/^\[writ#\d+\] closed/)?.[0]).toBe('info');
    for (const [, text] of logger.lines) expect(text).toMatch(LABEL);
  });

  it('tells two clients of the same write key apart', async () => {
    mockEndpoint();
    const logger = memoryLogger();
    const first = client({ logger });
    const second = client({ logger });
    first.track(track(1));
    second.track(track(2));
    await Promise.all([first.close(), second.close()]);

    const labels = new Set(logger.lines.map(([, text]) => LABEL.exec(text)?.[1]));
    expect(labels.size).toBe(2);
  });

  it('writes the same labelled lines to DEBUG=analytics', async () => {
    mockEndpoint();
    const previous = createDebug.disable();
    const printed: string[] = [];
    const print = log.log;
    createDebug.enable('analytics');
    log.log = (...args: unknown[]) => printed.push(format(...args));
    try {
      const analytics = client();
      analytics.track(track(1));
      await analytics.close();
    } finally {
      log.log = print;
      createDebug.enable(previous);
    }
    expect(printed.find((line) => line.includes('queued track'))).toMatch(/analytics \[writ#\d+\] queued track/);
  });

  it("asks a pino or winston logger's isLevelEnabled, so that lines of a level it turns off are not even formatted", async () => {
    mockEndpoint();
    const logger = { ...memoryLogger(), isLevelEnabled: (level: string) => level !== 'debug' };
    const analytics = client({ logger });
    analytics.track(track(1));
    await analytics.close();

    expect(logger.lines.map(([level]) => level)).not.toContain('debug');
    expect(logger.lines.map(([level]) => level)).toContain('info');
  });

  it('never lets a logger that throws break delivery', async () => {
    mockEndpoint();
    const broken = () => {
      throw new Error('logger down');
    };
    const analytics = client({ logger: { debug: broken, info: broken, warn: broken, error: broken } });
    analytics.track(track(1));
    expect(await analytics.close()).toEqual({ delivered: 1, failed: 0, dropped: 0 });
  });

  it('accepts console, and refuses an object without the four methods, naming the option', async () => {
    await client({ logger: console, disable: true }).close();
    expect(() => client({ logger: { info: () => {} } as never })).toThrow(
      expect.objectContaining({ name: 'ConfigError', option: 'logger', message: expect.stringContaining('without debug, warn, error') }),
    );
  });
});

afterEach(() => {
  expect(createDebug.enabled('analytics')).toBe(false);
});
