import { format } from 'node:util';
import createDebug from 'debug';
import { Agent } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { log } from '../../src/platform/log.js';
import {
  HttpError,
  type Message,
  NetworkError,
  signBody,
  TimeoutError,
  toWebhookBody,
  verifySignature,
  type WebhookAttemptEvent,
  WebhookDestination,
  type WebhookDestinationOptions,
  WebhookError,
  type WebhookSettings,
} from '../../src/webhooks/index.js';
import { record } from '../../../../test/helpers/events.js';
import { startLoopback } from '../../../../test/helpers/loopback.js';
import { selfSignedCertificate } from '../../../../test/helpers/certificate.js';
import { type Receiver, type Reply, sequence, startReceiver, status } from '../../../../test/helpers/receiver.js';

const track: Message = {
  type: 'track',
  messageId: 'msg-1',
  timestamp: '2024-03-01T12:30:00.123Z',
  userId: 'u1',
  event: 'Café ☕ Ordered',
  properties: { total: 4.5 },
  context: { ip: '203.0.113.9' },
};

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function receiver(reply?: Reply, tls?: { cert: string; key: string }): Promise<Receiver> {
  const started = await startReceiver(reply, tls);
  cleanup.push(started.close);
  return started;
}

function destination(settings: WebhookSettings, options: WebhookDestinationOptions = {}): WebhookDestination {
  const created = new WebhookDestination(settings, { minRetryDelay: 1, maxRetryDelay: 5, ...options });
  cleanup.push(() => created.close());
  return created;
}

describe('on()', () => {
  it('refuses an event it never emits, suggesting the one meant, and a listener that is no function', () => {
    const dest = destination({ webhooks: [{ url: 'http://127.0.0.1:9/' }] });
    const on = dest.on.bind(dest) as (type: unknown, listener: unknown) => () => void;
    expect(() => on('delivred', () => {})).toThrow(expect.objectContaining({ name: 'ConfigError', option: 'delivred', message: 'Unknown event `delivred` of on(): did you mean `delivered`?' }));
    expect(() => on('attempt', null)).toThrow(expect.objectContaining({ name: 'ConfigError', option: 'listener' }));
  });
});

describe('WebhookDestination against loopback receivers', () => {
  // A 2xx is the receiver's answer: what follows it in its body changes nothing, so deliver() does
  // not wait for it (up to `timeout`), and a close() meanwhile cannot turn it into a failure.
  it('resolves at a 2xx status, not when its body ends', async () => {
    let trickling: NodeJS.Timeout | undefined;
    let bodyEnded = false;
    const receiver = await startLoopback((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      let left = 40;
      trickling = setInterval(() => {
        if (res.destroyed) return clearInterval(trickling);
        res.write('.');
        if (--left === 0) {
          clearInterval(trickling);
          bodyEnded = true;
          res.end();
        }
      }, 250);
    });
    cleanup.push(async () => {
      clearInterval(trickling);
      await receiver.close();
    });
    const dest = destination({ webhooks: [{ url: receiver.url }] }, { timeout: 30_000 });
    const outcome = await dest.deliver(track);
    expect(outcome).toMatchObject({ delivered: true, attempts: 1 });
    expect(bodyEnded).toBe(false);
  }, 20_000);

  it('POSTs the spec body, signed over the exact bytes received, to every URL with only its own headers', async () => {
    const a = await receiver();
    const b = await receiver();
    const dest = destination({
      webhooks: [
        { url: a.url, headers: { Authorization: 'Bearer a' } },
        { url: b.url, headers: { 'X-Team': 'b' } },
      ],
      sharedSecret: 'shh',
    });

    expect(await dest.deliver(track)).toEqual({ delivered: true, attempts: 1 });

    const [atA, atB] = [a.requests[0]!, b.requests[0]!];
    expect(atA.method).toBe('POST');
    expect(atA.path).toBe('/hook');
    expect(JSON.parse(atA.raw.toString('utf8'))).toStrictEqual({ ...toWebhookBody(track), receivedAt: expect.any(String) });
    expect(atB.raw.equals(atA.raw)).toBe(true);
    for (const request of [atA, atB]) {
      expect(request.headers['user-agent']).toBe('batched-analytics-webhooks/1.0');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-signature']).toBe(signBody(request.raw, 'shh'));
      expect(verifySignature(request.raw, request.headers['x-signature'] as string, 'shh')).toBe(true);
    }
    expect(atA.headers.authorization).toBe('Bearer a');
    expect(atA.headers['x-team']).toBeUndefined();
    expect(atB.headers['x-team']).toBe('b');
    expect(atB.headers.authorization).toBeUndefined();
  });

  it('sends no X-Signature without a shared secret', async () => {
    const a = await receiver();
    await destination({ webhooks: [{ url: a.url }] }).deliver(track);
    expect(a.requests[0]!.headers).not.toHaveProperty('x-signature');
  });

  it('sends a delete notification as type, userId and timestamp only', async () => {
    const a = await receiver();
    await destination({ webhooks: [{ url: a.url }] }).deliver({ type: 'delete', userId: 'u1', timestamp: track.timestamp });
    expect(a.requests[0]!.raw.toString()).toBe('{"type":"delete","userId":"u1","timestamp":"2024-03-01T12:30:00.123Z"}');
  });

  it('counts the message processed when any URL answers 2xx, and never asks the failed URLs again', async () => {
    const failing = await receiver(status(500));
    const ok = await receiver(status(202));
    const dest = destination({ webhooks: [{ url: failing.url }, { url: ok.url }] });
    const attempts = record(dest, 'attempt');
    const delivered = record(dest, 'delivered');
    const retries = record(dest, 'retry');

    expect(await dest.deliver(track)).toEqual({ delivered: true, attempts: 1 });
    // The failed URL's request has settled too (the message was processed at the first 2xx): a
    // retry would be decided then, and every retry is told with its delay when it is scheduled.
    await vi.waitFor(() => expect(attempts).toHaveLength(2));
    expect(retries).toEqual([]);

    expect(failing.requests).toHaveLength(1);
    expect(ok.requests).toHaveLength(1);
    expect(delivered).toEqual([{ id: 'msg-1', messageId: 'msg-1', attempts: 1, accepted: [{ index: 1, url: ok.url, status: 202 }] }]);
    const byIndex = [...attempts].sort((x, y) => x.index - y.index);
    expect(byIndex).toMatchObject([
      { messageId: 'msg-1', type: 'track', attempt: 1, index: 0, url: failing.url, ok: false, status: 500 },
      { messageId: 'msg-1', type: 'track', attempt: 1, index: 1, url: ok.url, ok: true, status: 202 },
    ]);
    expect(byIndex[0]!.error).toBeInstanceOf(HttpError);
    expect(byIndex.every((e) => typeof e.duration === 'number')).toBe(true);
  });

  it('retries 5xx and network errors, then delivers', async () => {
    const flaky = await receiver(sequence(503, 500, 200));
    const dest = destination({ webhooks: [{ url: flaky.url }, { url: 'http://127.0.0.1:1/refused' }] });
    const retries = record(dest, 'retry');

    expect(await dest.deliver(track)).toEqual({ delivered: true, attempts: 3 });
    expect(flaky.requests).toHaveLength(3);
    expect(retries.map((r) => [r.attempt, r.urls])).toEqual([
      [1, [flaky.url, 'http://127.0.0.1:1/refused']],
      [2, [flaky.url, 'http://127.0.0.1:1/refused']],
    ]);
    const refused = retries[0]!.error.failures[1]!.error;
    expect(refused).toBeInstanceOf(NetworkError);
    expect(refused.message).toContain('ECONNREFUSED');
    expect(flaky.requests.every((r) => r.raw.equals(flaky.requests[0]!.raw))).toBe(true);
  });

  it('treats other 4xx as permanent: reported at once, not retried', async () => {
    const gone = await receiver(status(410));
    const dest = destination({ webhooks: [{ url: gone.url }] });
    const failed = record(dest, 'failed');

    const result = await dest.deliver(track);

    expect(result).toMatchObject({ delivered: false, attempts: 1 });
    expect(result.error).toBeInstanceOf(WebhookError);
    const error = result.error as WebhookError;
    expect(error.retryable).toBe(false);
    expect(error.failures).toMatchObject([{ index: 0, url: gone.url, error: { status: 410 } }]);
    expect(error.message).toContain(`${gone.url}: Request failed with status 410`);
    expect(gone.requests).toHaveLength(1);
    expect(failed).toEqual([{ id: 'msg-1', messageId: 'msg-1', attempts: 1, error }]);
  });

  it('retries a 3xx as a failed attempt with its status, and never follows it to where it points', async () => {
    const elsewhere = await receiver();
    for (const code of [301, 302, 307, 308]) {
      const moved = await receiver((request, res, n) =>
        n === 0 ? res.writeHead(code, { location: elsewhere.url }).end() : status(200)(request, res, n),
      );
      const dest = destination({ webhooks: [{ url: moved.url }] });
      const attempts = record(dest, 'attempt');
      const retries = record(dest, 'retry');

      expect(await dest.deliver(track)).toEqual({ delivered: true, attempts: 2 });
      expect(attempts.map(({ ok, status: answered }) => [ok, answered])).toEqual([[false, code], [true, 200]]);
      expect(retries[0]!.error.failures).toMatchObject([{ url: moved.url, error: { status: code, retryable: true } }]);
      expect(moved.requests).toHaveLength(2);
    }
    expect(elsewhere.requests).toEqual([]);
  });

  it('leaves a URL that answered a permanent 4xx out of later attempts', async () => {
    const rejecting = await receiver(status(400));
    const flaky = await receiver(sequence(503, 200));
    const dest = destination({ webhooks: [{ url: rejecting.url }, { url: flaky.url }] });
    const retries = record(dest, 'retry');

    expect(await dest.deliver(track)).toEqual({ delivered: true, attempts: 2 });
    expect(rejecting.requests).toHaveLength(1);
    expect(flaky.requests).toHaveLength(2);
    expect(retries[0]!.urls).toEqual([flaky.url]);
  });

  it('times out a receiver that does not answer within 5 seconds', async () => {
    // Only timers are faked: the request itself still crosses a real socket.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    try {
      const silent = await receiver(() => {});
      const dest = destination({ webhooks: [{ url: silent.url }] }, { retryWindow: 0 });
      const attempts = record(dest, 'attempt');
      const delivery = dest.deliver(track);
      await silent.nth(1);

      await vi.advanceTimersByTimeAsync(4_999);
      expect(attempts).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      const result = await delivery;

      expect(result).toMatchObject({ delivered: false, attempts: 1 });
      const timeout = (result.error as WebhookError).failures[0]!.error;
      expect(timeout).toBeInstanceOf(TimeoutError);
      expect(timeout.message).toBe('Request timed out after 5000 ms');
      expect(attempts).toMatchObject([{ ok: false, error: timeout, duration: 5_000 }]);
    } finally {
      vi.useRealTimers();
    }
  });

  describe('TLS', () => {
    const certificate = selfSignedCertificate();

    it('refuses a self-signed receiver: no request reaches it, and the error says why', async () => {
      const https = await receiver(status(200), certificate);
      const dest = destination({ webhooks: [{ url: https.url }] });

      const result = await dest.deliver(track);

      expect(result).toMatchObject({ delivered: false, attempts: 1 });
      const error = (result.error as WebhookError).failures[0]!.error;
      expect(error).toBeInstanceOf(NetworkError);
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(/DEPTH_ZERO_SELF_SIGNED_CERT: self[- ]signed certificate/);
      expect(https.requests).toHaveLength(0);
    });

    it('reaches the same receiver once its certificate is trusted, so only the self-signing was at fault', async () => {
      const https = await receiver(status(200), certificate);
      const trusting = new Agent({ connect: { ca: certificate.cert } });
      cleanup.push(() => trusting.close());

      expect(await destination({ webhooks: [{ url: https.url }] }, { dispatcher: trusting }).deliver(track)).toEqual({
        delivered: true,
        attempts: 1,
      });
      expect(https.requests).toHaveLength(1);
    });

    it('keeps verifying when NODE_TLS_REJECT_UNAUTHORIZED=0', async () => {
      const https = await receiver(status(200), certificate);
      vi.stubEnv('NODE_TLS_REJECT_UNAUTHORIZED', '0');
      try {
        const result = await destination({ webhooks: [{ url: https.url }] }).deliver(track);
        expect(result.delivered).toBe(false);
        expect(https.requests).toHaveLength(0);
      } finally {
        vi.unstubAllEnvs();
      }
    });
  });

  it('logs every attempt and outcome under DEBUG=analytics', async () => {
    const lines: string[] = [];
    const write = log.log;
    const namespaces = createDebug.disable();
    createDebug.enable('analytics');
    log.log = (...args: unknown[]) => lines.push(format(...args));
    try {
      const failing = await receiver(status(500));
      const ok = await receiver(sequence(503, 200));
      await destination({ webhooks: [{ url: failing.url }, { url: ok.url }] }).deliver(track);
    } finally {
      log.log = write;
      createDebug.enable(namespaces);
    }
    const text = lines.join('\n');
    expect(text).toMatch(/attempt 1: http:\/\/127\.0\.0\.1:\d+\/hook failed in \d+ ms: Request failed with status 500/);
    expect(text).toMatch(/msg-1 attempt 1 failed; retrying 2 URL\(s\) in \d+ ms/);
    expect(text).toMatch(/msg-1 attempt 2: http:\/\/127\.0\.0\.1:\d+\/hook answered 200/);
    expect(text).toContain('msg-1 delivered after 2 attempt(s)');
  });

  it('throws a ValidationError at the call for a message it cannot send, before any request', async () => {
    const a = await receiver();
    const dest = destination({ webhooks: [{ url: a.url }] });
    expect(() => dest.deliver({ ...track, properties: { total: 10n } })).toThrow(
      expect.objectContaining({ name: 'ValidationError', field: 'message', message: expect.stringContaining('BigInt') }),
    );
    expect(() => dest.deliver({ ...track, type: 'purchase' } as unknown as Message)).toThrow(expect.objectContaining({ field: 'type' }));
    for (const receivedAt of ['1', '2026-02-31T00:00:00Z', '2026-01-01T10:00:00+1']) {
      expect(() => dest.deliver(track, { receivedAt })).toThrow(expect.objectContaining({ name: 'ValidationError', field: 'receivedAt' }));
    }
    expect(a.requests).toHaveLength(0);
  });

  it('delivers many messages at once without a listener-leak warning', async () => {
    const a = await receiver();
    const dest = destination({ webhooks: [{ url: a.url }] });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const results = await Promise.all(Array.from({ length: 30 }, (_, n) => dest.deliver({ ...track, messageId: `m${n}` })));
      await new Promise(setImmediate);
      expect(results.every((r) => r.delivered)).toBe(true);
    } finally {
      process.off('warning', onWarning);
    }
    expect(a.requests).toHaveLength(30);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
  });

  it('keeps delivering when a listener throws', async () => {
    const a = await receiver();
    const dest = destination({ webhooks: [{ url: a.url }] });
    dest.on('attempt', (_event: WebhookAttemptEvent) => {
      throw new Error('listener bug');
    });
    expect(await dest.deliver(track)).toEqual({ delivered: true, attempts: 1 });
  });
});
