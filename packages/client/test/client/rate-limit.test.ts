import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Analytics, HttpError, type Options, RateLimitError } from '../../src/index.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';
import { recordEvents, track } from '../../../../test/helpers/client.js';
import { lateness } from '../../../../test/helpers/timing.js';

// A real loopback service that rate-limits: every request before `limitedUntil` gets the status
// and a `Retry-After` reaching it; later ones are accepted. Times are the server's own clock.

interface Limiter {
  server: Loopback;
  /** Arrival time (Date.now()) of each request, with the status it got. */
  log: { at: number; status: number }[];
  /** When the service accepts again; set by the first request. */
  limitedUntil: () => number;
}

async function startLimiter(options: { status?: number; seconds: number; asDate?: boolean; forever?: boolean }): Promise<Limiter> {
  const log: Limiter['log'] = [];
  let until = 0;
  const server = await startLoopback((_, res) => {
    const now = Date.now();
    if (until === 0) {
      // An HTTP date has whole seconds: the limit ends on one.
      until = options.asDate ? Math.ceil((now + options.seconds * 1000) / 1000) * 1000 : now + options.seconds * 1000;
    }
    if (options.forever || now < until) {
      log.push({ at: now, status: options.status ?? 429 });
      const retryAfter = options.asDate ? new Date(until).toUTCString() : String(Math.ceil((until - now) / 1000));
      res.writeHead(options.status ?? 429, { 'retry-after': options.forever ? String(options.seconds) : retryAfter });
      res.end('{"message":"slow down"}');
      return;
    }
    log.push({ at: now, status: 200 });
    res.end('{"success":true}');
  });
  return { server, log, limitedUntil: () => until };
}

/** Resolves once `analytics` has read the service's limit: it tells its `rate-limit` listeners. */
const paused = (analytics: Analytics) =>
  new Promise<void>((resolve) => {
    const off = analytics.on('rate-limit', () => {
      off();
      resolve();
    });
  });

let limiter: Limiter | undefined;
let dir: string | undefined;
afterEach(async () => {
  await limiter?.server.close();
  limiter = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A client whose own retry schedule is far shorter than the limits these tests set. */
function rateLimitedClient(endpoint: string, options: Options = {}): Analytics {
  return new Analytics('wk', { endpoint, flushAt: 1, minRetryDelay: 50, maxRetryDelay: 200, maxRetries: 1, ...options });
}

describe('a service that answers with Retry-After', () => {
  it.each([
    ['429, Retry-After in seconds', { status: 429, seconds: 1 }],
    ['503, Retry-After in seconds', { status: 503, seconds: 1 }],
    ['429, Retry-After as an HTTP date', { status: 429, seconds: 1, asDate: true }],
  ])('%s: pauses every batch until then, spends no retry, loses nothing', async (_, setup) => {
    limiter = await startLimiter(setup);
    const analytics = rateLimitedClient(limiter.server.url, { maxInFlight: 4 });
    analytics.on('error', () => {});
    const limited = paused(analytics);
    analytics.track(track(0));
    await limited;
    // Sent while the client knows of the limit: they wait for it too.
    for (let n = 1; n <= 3; n += 1) analytics.track(track(n));
    const summary = await analytics.flush();

    expect(summary).toEqual({ delivered: 4, failed: 0, dropped: 0 });
    const early = limiter.log.filter((request, index) => index > 0 && request.at < limiter!.limitedUntil());
    expect(early).toEqual([]);
    expect(limiter.log.map((request) => request.status)).toEqual([setup.status, 200, 200, 200, 200]);
    // A batch that waited says when it was really sent: the service corrects timestamps with it.
    const sentAt = limiter.server.requests.slice(1).map((request) => Date.parse(JSON.parse(request.body).sentAt));
    for (const at of sentAt) expect(at).toBeGreaterThanOrEqual(limiter.limitedUntil());
    await analytics.close();
  });

  it('tells listeners of the pause with the time it ends', async () => {
    limiter = await startLimiter({ seconds: 1 });
    const analytics = rateLimitedClient(limiter.server.url);
    const pauses = recordEvents(analytics, 'rate-limit');
    analytics.track(track(0));
    await analytics.flush();

    expect(pauses).toHaveLength(1);
    expect(pauses[0]).toMatchObject({ status: 429, count: 1 });
    expect(pauses[0]!.delay).toBeGreaterThan(900);
    expect(pauses[0]!.until.getTime()).toBeGreaterThanOrEqual(limiter.limitedUntil());
    await analytics.close();
  });

  it('fails the batch with a RateLimitError when the wait asked for ends past maxRateLimitDuration', async () => {
    limiter = await startLimiter({ seconds: 60, forever: true });
    const analytics = rateLimitedClient(limiter.server.url, { maxRateLimitDuration: 10_000 });
    const errors = recordEvents(analytics, 'error');
    const started = Date.now();
    analytics.track(track(0));
    const summary = await analytics.flush();

    expect(summary).toEqual({ delivered: 0, failed: 1, dropped: 0 });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RateLimitError);
    expect(errors[0]).toMatchObject({ code: 'ERR_RATE_LIMITED', status: 429, maxRateLimitDuration: 10_000 });
    // No point waiting for a wait that cannot end in time: one request, and no sleep. A client that
    // slept (the 60 s asked for, or up to maxRateLimitDuration) would take 10 s at least; one that
    // did not takes one loopback request, even on a busy machine.
    expect(limiter.log).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    await analytics.close();
  });

  it('waits out a Retry-After longer than a timer holds without spinning, when maxRateLimitDuration allows it', async () => {
    const days = 24 * 3_600;
    limiter = await startLimiter({ seconds: 30 * days, forever: true });
    const analytics = rateLimitedClient(limiter.server.url, { maxRateLimitDuration: 60 * days * 1_000 });
    const errors = recordEvents(analytics, 'error');
    // Node warns of each timer armed past 2^31 - 1 ms, then fires it after 1 ms.
    const overflows: Error[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === 'TimeoutOverflowWarning') overflows.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const limited = paused(analytics);
      analytics.track(track(0));
      await limited;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(overflows).toEqual([]);
      expect(limiter.log).toHaveLength(1);
      expect(errors).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await analytics.close({ timeout: 0 });
    }
  });

  it('close({ timeout }) keeps its deadline during a pause and dead-letters what is left', async () => {
    limiter = await startLimiter({ seconds: 5, forever: true });
    dir = await mkdtemp(join(tmpdir(), 'rate-limit-'));
    const deadLetter = join(dir, 'dead.ndjson');
    const analytics = rateLimitedClient(limiter.server.url, { deadLetter, maxQueueSize: 5, maxInFlight: 1 });
    analytics.on('error', () => {});
    const drops = recordEvents(analytics, 'drop');
    const limited = paused(analytics);
    analytics.track(track(0));
    await limited;
    // The queue keeps its bound while the client waits.
    for (let n = 1; n <= 6; n += 1) analytics.track(track(n));
    expect(drops.map((drop) => drop.reason)).toEqual(['queue-full', 'queue-full']);
    const started = performance.now();
    const baseline = lateness(300);
    const summary = await analytics.close({ timeout: 300 });
    const took = performance.now() - started;

    // The deadline, not the 5 s pause: close() ends when its 300 ms timer fires (as late as a
    // baseline timer set beside it), plus a second for writing the dead letters.
    expect(took).toBeLessThan(300 + (await baseline) + 1_000);
    expect(summary).toEqual({ delivered: 0, failed: 5, dropped: 2 });
    const lines = (await readFile(deadLetter, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(7);
    expect(limiter.log).toHaveLength(1);
  });

  it('a 429 without Retry-After is an ordinary retry: it spends one', async () => {
    const server = await startLoopback((_, res) => {
      res.statusCode = 429;
      res.end();
    });
    try {
      const analytics = rateLimitedClient(server.url);
      const errors = recordEvents(analytics, 'error');
      analytics.track(track(0));
      expect(await analytics.flush()).toEqual({ delivered: 0, failed: 1, dropped: 0 });
      expect(server.requests).toHaveLength(2);
      expect(errors[0]).toBeInstanceOf(HttpError);
      await analytics.close();
    } finally {
      await server.close();
    }
  });
});
