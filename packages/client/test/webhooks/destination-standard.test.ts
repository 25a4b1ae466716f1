// Standard Webhooks and secret rotation, as a customer's receiver sees them: real loopback receivers
// that check each request with the spec's own libraries (standardwebhooks, svix), not with ours.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type WebhookInput,
  verifySignature,
  verifyStandardWebhook,
  WebhookDestination,
  type WebhookDestinationOptions,
  type WebhookSettings,
} from '../../src/webhooks/index.js';
import { type ReceivedRequest, type Reply, sequence, startReceiver, status } from '../../../../test/helpers/receiver.js';
import { newSecret, realVerifierAccepts, type VerifierName } from '../../../../test/helpers/standard-webhooks.js';

const VERIFIERS: VerifierName[] = ['standardwebhooks', 'svix'];

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function receiver(reply?: Reply) {
  const started = await startReceiver(reply);
  cleanup.push(() => started.close());
  return started;
}

function destination(url: string, settings: Omit<WebhookSettings, 'webhooks'>, options: WebhookDestinationOptions = {}): WebhookDestination {
  const dest = new WebhookDestination({ webhooks: [{ url }], ...settings }, { minRetryDelay: 10, maxRetryDelay: 50, ...options });
  cleanup.push(() => dest.close());
  return dest;
}

const message = (n: number): WebhookInput => ({ type: 'track', messageId: `msg-${n}`, userId: 'u1', event: 'Café ☕ Ordered', properties: { n } });

/** A receiver's check: 204 when `accepts` says yes, else 401 (not retried: the sender's signature is wrong). */
const checking =
  (accepts: (request: ReceivedRequest) => boolean | Promise<boolean>): Reply =>
  (request, res) =>
    void Promise.resolve(accepts(request)).then((ok) => res.writeHead(ok ? 204 : 401).end());

const byAllRealVerifiers = (secrets: string[]) => (request: ReceivedRequest) =>
  VERIFIERS.every((name) => realVerifierAccepts(name, secrets, request.raw, request.headers));

describe('Standard Webhooks', () => {
  it('signs every attempt so that the standardwebhooks and svix verifiers accept it; same id and body each time', async () => {
    const secret = newSecret();
    const arrived: number[] = [];
    const flaky = sequence(503, 503, 200);
    const hook = await receiver((request, res, n) => {
      arrived.push(Date.now());
      flaky(request, res, n);
    });
    const dest = destination(hook.url, { standardWebhooks: { secrets: [secret] }, sharedSecret: 'shh' });
    expect(await dest.deliver(message(1))).toMatchObject({ delivered: true, attempts: 3 });

    expect(hook.requests).toHaveLength(3);
    for (const [n, request] of hook.requests.entries()) {
      for (const name of VERIFIERS) expect(realVerifierAccepts(name, [secret], request.raw, request.headers), `${name}, attempt ${n + 1}`).toBe(true);
      expect(request.headers['webhook-id']).toBe('msg-1');
      expect(request.raw.equals(hook.requests[0]!.raw)).toBe(true);
      // The whole second it was sent in: the arrival's second, or the one before when the send was
      // just before a second began (comparing with the arrival's milliseconds missed that by 46 ms).
      expect([0, 1]).toContain(Math.floor(arrived[n]! / 1000) - Number(request.headers['webhook-timestamp']));
      // X-Signature is still sent, unchanged.
      expect(verifySignature(request.raw, request.headers['x-signature'], 'shh')).toBe(true);
      expect(await verifyStandardWebhook(request.raw, request.headers, secret)).toBe(true);
    }
  });

  it("stamps each attempt with its own time: a retry a second later carries a new timestamp and signature", async () => {
    const secret = newSecret();
    const hook = await receiver((request, res, n) => (n === 0 ? status(503, { 'retry-after': '1' }) : status(200))(request, res, n));
    const dest = destination(hook.url, { standardWebhooks: { secrets: [secret] } }, { maxRetryDelay: 2_000 });
    expect(await dest.deliver(message(2))).toMatchObject({ delivered: true, attempts: 2 });
    const [first, second] = hook.requests;
    expect(Number(second!.headers['webhook-timestamp'])).toBeGreaterThan(Number(first!.headers['webhook-timestamp']));
    expect(second!.headers['webhook-signature']).not.toBe(first!.headers['webhook-signature']);
    for (const request of hook.requests) expect(byAllRealVerifiers([secret])(request)).toBe(true);
  });

  it('sends no Standard Webhooks header unless asked', async () => {
    const hook = await receiver();
    await destination(hook.url, { sharedSecret: 'shh' }).deliver(message(3));
    expect(Object.keys(hook.requests[0]!.headers).filter((name) => name.startsWith('webhook-'))).toEqual([]);
  });

  it('a request replayed after the tolerance is refused by verifyStandardWebhook and by the real verifiers', async () => {
    const secret = newSecret();
    const hook = await receiver();
    await destination(hook.url, { standardWebhooks: { secrets: [secret] } }).deliver(message(4));
    const [captured] = hook.requests;
    expect(await verifyStandardWebhook(captured!.raw, captured!.headers, secret)).toBe(true);

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 5 * 60 * 1000 + 2_000);
    expect(await verifyStandardWebhook(captured!.raw, captured!.headers, secret)).toBe(false);
    for (const name of VERIFIERS) expect(realVerifierAccepts(name, [secret], captured!.raw, captured!.headers), name).toBe(false);
    // Only its age is wrong: with a wider tolerance it passes.
    expect(await verifyStandardWebhook(captured!.raw, captured!.headers, secret, { tolerance: 10 * 60 * 1000 })).toBe(true);
  });
});

describe('rotating a secret', () => {
  const N = 20;

  /** Delivers N messages through a sender with `settings`, then closes it: one deployment of the sender. */
  async function send(url: string, settings: Omit<WebhookSettings, 'webhooks'>, from: number): Promise<boolean[]> {
    const dest = destination(url, settings);
    const results = await Promise.all(Array.from({ length: N }, (_, n) => dest.deliver(message(from + n))));
    return results.map(({ delivered }) => delivered);
  }

  it('Standard Webhooks: a sender moved from [A] to [B, A] loses nothing at receivers that know A or B; one that knows only B refuses A-only requests', async () => {
    const [a, b] = [newSecret(), newSecret()];
    const knowsA = await receiver(checking(byAllRealVerifiers([a])));
    const knowsBoth = await receiver(checking((request) => verifyStandardWebhook(request.raw, request.headers, [a, b])));
    const knowsB = await receiver(checking(byAllRealVerifiers([b])));

    for (const hook of [knowsA, knowsBoth]) {
      expect(await send(hook.url, { standardWebhooks: { secrets: [a] } }, 0)).toEqual(Array(N).fill(true));
      expect(await send(hook.url, { standardWebhooks: { secrets: [b, a] } }, N)).toEqual(Array(N).fill(true));
      expect(hook.requests).toHaveLength(2 * N);
    }
    // During the overlap both signatures travel: the receiver may move to B whenever it likes.
    expect(await send(knowsB.url, { standardWebhooks: { secrets: [b, a] } }, 0)).toEqual(Array(N).fill(true));
    expect(await send(knowsB.url, { standardWebhooks: { secrets: [a] } }, N)).toEqual(Array(N).fill(false));
    expect(knowsB.requests.slice(N).every((request) => !byAllRealVerifiers([b])(request))).toBe(true);
  });

  it('X-Signature: a sender switched from A to [B, A] signs with B; receivers accepting [A, B] lose nothing, one accepting only B refuses A', async () => {
    const knowsBoth = await receiver(checking((request) => verifySignature(request.raw, request.headers['x-signature'], ['A', 'B'])));
    const knowsB = await receiver(checking((request) => verifySignature(request.raw, request.headers['x-signature'], 'B')));

    expect(await send(knowsBoth.url, { sharedSecret: 'A' }, 0)).toEqual(Array(N).fill(true));
    expect(await send(knowsBoth.url, { sharedSecret: ['B', 'A'] }, N)).toEqual(Array(N).fill(true));
    expect(knowsBoth.requests).toHaveLength(2 * N);
    for (const request of knowsBoth.requests.slice(N)) expect(verifySignature(request.raw, request.headers['x-signature'], 'B')).toBe(true);

    expect(await send(knowsB.url, { sharedSecret: 'A' }, 0)).toEqual(Array(N).fill(false));
    expect(await send(knowsB.url, { sharedSecret: ['B', 'A'] }, N)).toEqual(Array(N).fill(true));
  });
});
