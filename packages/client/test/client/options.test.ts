import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { Analytics, ConfigError, DEFAULTS } from '../../src/index.js';
import { resolveOptions } from '../../src/client/options.js';
import { startLoopback } from '../../../../test/helpers/loopback.js';

describe('resolveOptions', () => {
  it('applies the documented defaults', () => {
    const o = resolveOptions('wk');
    expect(o).toMatchObject({ ...DEFAULTS, url: 'https://api.segment.io/v1/batch' });
    expect(DEFAULTS).toMatchObject({ flushAt: 20, flushAfter: 5_000, maxQueueSize: 10_000, maxRetries: 10, timeout: 10_000 });
  });

  it('appends /v1/batch to the endpoint, keeping a path prefix', () => {
    expect(resolveOptions('wk', { endpoint: 'http://127.0.0.1:8080/' }).url).toBe('http://127.0.0.1:8080/v1/batch');
    expect(resolveOptions('wk', { endpoint: 'https://proxy.example/segment' }).url).toBe('https://proxy.example/segment/v1/batch');
  });

  it.each([
    [{ flushAt: 0 }, 'flushAt', 'Expected `flushAt` to be an integer >= 1, got `0` (number)'],
    [{ size: 1.5 }, 'flushAt', 'Expected `flushAt` to be an integer >= 1, got `1.5` (number)'],
    [{ flushAfter: '5s' as never }, 'flushAfter', 'Expected `flushAfter` to be an integer >= 1 and <= 2147483647, got `"5s"` (string)'],
    [{ flushAt: 5, size: 6 }, 'flushAt', 'Expected only one of `flushAt` and its alias `size`, got both'],
    [{ maxQueueSize: 10, flushAt: 20 }, 'maxQueueSize', 'Expected `maxQueueSize` to be >= `flushAt` (20), got `10`'],
    [{ maxRetries: -1 }, 'maxRetries', 'Expected `maxRetries` to be an integer >= 0, got `-1` (number)'],
    [{ timeout: 0 }, 'timeout', 'Expected `timeout` to be an integer >= 1 and <= 2147483647, got `0` (number)'],
    [{ maxInFlight: 0 }, 'maxInFlight', 'Expected `maxInFlight` to be an integer >= 1, got `0` (number)'],
    [{ minRetryDelay: 500, maxRetryDelay: 100 }, 'maxRetryDelay', 'Expected `maxRetryDelay` to be an integer >= 500 and <= 2147483647, got `100` (number)'],
    [{ endpoint: 'ftp://x' }, 'endpoint', 'Expected `endpoint` to be an absolute http(s) URL, got `"ftp://x"` (string)'],
    [{ endpoint: 'api.segment.io' }, 'endpoint', 'Expected `endpoint` to be an absolute http(s) URL, got `"api.segment.io"` (string)'],
    [{ gzip: 'yes' as never }, 'gzip', 'Expected `gzip` to be a boolean, got `"yes"` (string)'],
    [{ context: [] as never }, 'context', 'Expected `context` to be a plain object, got an array'],
    [{ integrations: null as never }, 'integrations', 'Expected `integrations` to be a plain object, got `null`'],
    [{ fetch: 'fetch' as never }, 'fetch', 'Expected `fetch` to be a function, got `"fetch"` (string)'],
  ])('rejects %o naming %s', (options, option, message) => {
    let error: unknown;
    try {
      new Analytics('wk', options);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ name: 'ConfigError', code: 'ERR_CONFIG', option, message });
  });

  it.each([
    [{ timeout: 2 ** 31 }, 'timeout', 1],
    [{ flushAfter: 2 ** 31 }, 'flushAfter', 1],
    [{ flushInterval: 2 ** 31 }, 'flushAfter', 1],
    [{ minRetryDelay: 2 ** 31 }, 'minRetryDelay', 0],
    [{ maxRetryDelay: 2 ** 31 }, 'maxRetryDelay', 100],
    [{ spoolInterval: 2 ** 31 }, 'spoolInterval', 1],
  ])('refuses %o, a wait longer than a timer can hold, naming %s and the maximum', (options, option, min) => {
    expect(() => new Analytics('wk', options)).toThrow(
      new ConfigError(option, `Expected \`${option}\` to be an integer >= ${min} and <= 2147483647, got \`2147483648\` (number)`),
    );
  });

  it('takes the longest wait a timer holds, and a maxRateLimitDuration beyond it (no timer waits that long)', () => {
    const max = 2 ** 31 - 1;
    const o = resolveOptions('wk', { timeout: max, flushAfter: max, maxRetryDelay: max, spoolInterval: max, maxRateLimitDuration: 60 * 24 * 3_600_000 });
    expect(o).toMatchObject({ timeout: max, flushAfter: max, maxRetryDelay: max, spoolInterval: max, maxRateLimitDuration: 60 * 24 * 3_600_000 });
  });

  it('refuses an integrations option a call would refuse, naming the entry, with the message a call gets', () => {
    const integrations = { Webhooks: 'yes', All: 3 } as never;
    const construction = thrown(() => new Analytics('wk', { integrations }));
    const call = thrown(() => new Analytics('wk', { disable: true }).track({ userId: 'u', event: 'e', integrations }));
    expect(construction).toBeInstanceOf(ConfigError);
    expect(construction).toMatchObject({ option: 'integrations.Webhooks', message: (call as Error).message });
    expect(construction).toMatchObject({ message: 'Expected `integrations.Webhooks` to be a boolean or an object, got `"yes"` (string)' });
  });

  it.each([
    [{ build: 1n }, 'context.build', 'Expected `context.build` to be JSON-serialisable: Do not know how to serialize a BigInt'],
    [{ toJSON: () => ({}) }, 'context', 'Expected `context` to have no `toJSON` method, got one'],
  ])('refuses a context no call could send (%o), naming %s, instead of failing every call', (context, option, message) => {
    expect(() => new Analytics('wk', { context })).toThrow(new ConfigError(option, message));
  });

  it('refuses a context or integrations that cannot be serialised, naming the entry', () => {
    const looped: Record<string, unknown> = { app: 'shop' };
    looped.self = looped;
    expect(thrown(() => new Analytics('wk', { context: looped }))).toMatchObject({ name: 'ConfigError', option: 'context.self' });
    expect(thrown(() => new Analytics('wk', { integrations: { Webhooks: { since: 1n } } }))).toMatchObject({
      name: 'ConfigError',
      option: 'integrations.Webhooks',
    });
  });

  it.each([
    [{}, 'Expected `dispatcher` to be an undici Dispatcher, with request and dispatch methods, got an instance of Object without request, dispatch'],
    [{ request: () => {} }, 'Expected `dispatcher` to be an undici Dispatcher, with request and dispatch methods, got an instance of Object without dispatch'],
    ['agent', 'Expected `dispatcher` to be an undici Dispatcher, with request and dispatch methods, got `"agent"` (string) without request, dispatch'],
  ])('refuses a dispatcher that cannot send (%o) at construction, rather than failing each batch', (dispatcher, message) => {
    expect(() => new Analytics('wk', { dispatcher: dispatcher as never })).toThrow(new ConfigError('dispatcher', message));
  });

  it('sends through an undici Agent given as the dispatcher, and leaves it open', async () => {
    const server = await startLoopback();
    const dispatcher = new Agent();
    try {
      const analytics = new Analytics('wk', { endpoint: server.url, dispatcher, flushAt: 1 });
      analytics.track({ userId: 'u', event: 'e' });
      expect(await analytics.close()).toEqual({ delivered: 1, failed: 0, dropped: 0 });
      expect(dispatcher.closed).toBe(false);
    } finally {
      await dispatcher.close();
      await server.close();
    }
  });

  it('requires a write key', () => {
    expect(() => new Analytics('')).toThrow(new ConfigError('writeKey', 'Expected `writeKey` to be a non-empty string, got `""` (string)'));
  });
});

describe('option mistakes a JavaScript caller can make', () => {
  it('refuses an unknown option, naming it and the closest known one', () => {
    let error: unknown;
    try {
      new Analytics('wk', { flushAtt: 5 } as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ option: 'flushAtt', message: 'Unknown option `flushAtt`: did you mean `flushAt`?' });
    expect(() => new Analytics('wk', { colour: 'blue' } as never)).toThrow(new ConfigError('colour', 'Unknown option `colour`'));
  });

  it.each([
    ['host', 'endpoint'],
    ['path', 'endpoint'],
    ['batchSize', 'flushAt'],
    ['maxEventsInBatch', 'flushAt'],
    ['httpRequestTimeout', 'timeout'],
    ['httpClient', 'dispatcher'],
  ])('refuses another client\'s option `%s`, pointing to `%s`', (name, meant) => {
    expect(() => new Analytics('wk', { [name]: 1 } as never)).toThrow(new ConfigError(name, `Unknown option \`${name}\`: did you mean \`${meant}\`?`));
  });

  it('refuses an unknown option of close() and flush(), naming it, at the call', async () => {
    const analytics = new Analytics('wk', { endpoint: 'http://127.0.0.1:9' });
    expect(() => analytics.close({ timout: 5 } as never)).toThrow(new ConfigError('timout', 'Unknown option `timout` of close(): did you mean `timeout`?'));
    const flush = analytics.flush as (options: unknown) => Promise<unknown>;
    expect(() => flush.call(analytics, { timeout: 5 })).toThrow(new ConfigError('timeout', 'Unknown option `timeout` of flush(): it takes none'));
    // Neither call closed or flushed anything: the client still closes as asked.
    await expect(analytics.close({ timeout: 0 })).resolves.toEqual({ delivered: 0, failed: 0, dropped: 0 });
  });

  it.each([
    [500, 'Expected the options of close() to be a plain object, got `500` (number): for a deadline of 500 ms, pass `{ timeout: 500 }`'],
    [null, 'Expected the options of close() to be a plain object, got `null`'],
    ['5s', 'Expected the options of close() to be a plain object, got `"5s"` (string)'],
    [[1], 'Expected the options of close() to be a plain object, got an array'],
  ])('refuses close(%j), naming its options, at the call', async (argument, message) => {
    const analytics = new Analytics('wk', { endpoint: 'http://127.0.0.1:9' });
    const close = analytics.close as (options: unknown) => Promise<unknown>;
    expect(() => close.call(analytics, argument)).toThrow(new ConfigError('options', message));
    // The refused call did not close the client: it closes as asked.
    await expect(analytics.close({ timeout: 0 })).resolves.toEqual({ delivered: 0, failed: 0, dropped: 0 });
  });

  it.each([
    [500, 'Expected flush() to be called without options, got `500` (number): for a deadline of 500 ms, pass `{ timeout: 500 }` to close()'],
    [null, 'Expected flush() to be called without options, got `null`'],
    ['now', 'Expected flush() to be called without options, got `"now"` (string)'],
  ])('refuses flush(%j), naming its options, at the call', async (argument, message) => {
    const analytics = new Analytics('wk', { endpoint: 'http://127.0.0.1:9' });
    const flush = analytics.flush as (options: unknown) => Promise<unknown>;
    expect(() => flush.call(analytics, argument)).toThrow(new ConfigError('options', message));
    await expect(analytics.close({ timeout: 0 })).resolves.toEqual({ delivered: 0, failed: 0, dropped: 0 });
  });

  it('refuses a close() deadline longer than a timer can hold, at the call, and stays open', async () => {
    const analytics = new Analytics('wk', { endpoint: 'http://127.0.0.1:9' });
    expect(() => analytics.close({ timeout: 2 ** 31 })).toThrow(
      new ConfigError('timeout', 'Expected `timeout` to be an integer >= 0 and <= 2147483647, got `2147483648` (number)'),
    );
    await expect(analytics.close({ timeout: 0 })).resolves.toEqual({ delivered: 0, failed: 0, dropped: 0 });
  });

  it('takes an endpoint that already ends in /v1/batch as the batch URL, not as a base', () => {
    expect(resolveOptions('wk', { endpoint: 'http://127.0.0.1:8080/v1/batch' }).url).toBe('http://127.0.0.1:8080/v1/batch');
    expect(resolveOptions('wk', { endpoint: 'https://proxy.example/segment/v1/batch/' }).url).toBe('https://proxy.example/segment/v1/batch');
  });

  it('refuses an endpoint ending in another route of the service', () => {
    expect(() => new Analytics('wk', { endpoint: 'http://x/v1/track' })).toThrow(
      new ConfigError('endpoint', 'Expected `endpoint` to be the base URL of the service (batches go to its /v1/batch), got `"http://x/v1/track"`: drop the route'),
    );
  });

  it("accepts segment's form, new Analytics({ writeKey, ...options })", async () => {
    const server = await startLoopback();
    try {
      const analytics = new Analytics({ writeKey: 'wk_segment', endpoint: server.url, flushAt: 1 });
      analytics.track({ userId: 'u', event: 'Signed Up' });
      expect(await analytics.close()).toEqual({ delivered: 1, failed: 0, dropped: 0 });
      expect(server.requests.map((request) => [request.url, request.headers.authorization])).toEqual([
        ['/v1/batch', `Basic ${Buffer.from('wk_segment:').toString('base64')}`],
      ]);
    } finally {
      await server.close();
    }
  });

  it("refuses segment's form without a writeKey, or with a second argument", () => {
    expect(() => new Analytics({ flushAt: 1 } as never)).toThrow(
      new ConfigError('writeKey', 'Expected `writeKey` to be a non-empty string, got `undefined`'),
    );
    expect(() => new Analytics({ writeKey: 'wk' } as never, { flushAt: 1 })).toThrow(
      new ConfigError('options', 'Expected either new Analytics(writeKey, options) or new Analytics({ writeKey, ...options }), got both'),
    );
  });
});

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
