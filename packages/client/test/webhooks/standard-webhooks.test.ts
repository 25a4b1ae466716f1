import { describe, expect, it, vi } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { signStandard as signNode } from '../../src/webhooks/signature.js';
import { signStandard as signWeb } from '../../src/webhooks/signature.web.js';
import { secretKey } from '../../src/webhooks/standard-format.js';
import { verifyStandardWebhook } from '../../src/webhooks/verify.js';
import { newSecret } from '../../../../test/helpers/standard-webhooks.js';

const body = '{"version":1,"type":"track","userId":"u1","event":"Café ☕","properties":{}}';
const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';

// The destination's two signers (node:crypto and Web Crypto) must each give what the spec's own
// library computes for the same id, timestamp, body and secret.
describe.each([
  ['node:crypto (signature.ts)', signNode],
  ['Web Crypto (signature.web.ts)', signWeb],
])('signStandard, %s', (_name, sign) => {
  it.each([24, 32, 64])('signs id.timestamp.body as the standardwebhooks library does, with a %d-byte key', async (bytes) => {
    const secret = newSecret(bytes);
    const timestamp = Math.floor(Date.now() / 1000);
    const expected = new StandardWebhook(secret).sign(id, new Date(timestamp * 1000), body);
    expect(`v1,${await sign(secretKey(secret)!, id, timestamp, new TextEncoder().encode(body))}`).toBe(expected);
  });

  it('gives another signature for another secret, id, timestamp or body', async () => {
    const key = secretKey(newSecret())!;
    const payload = new TextEncoder().encode(body);
    const signature = await sign(key, id, 1_700_000_000, payload);
    expect(await sign(secretKey(newSecret())!, id, 1_700_000_000, payload)).not.toBe(signature);
    expect(await sign(key, `${id}x`, 1_700_000_000, payload)).not.toBe(signature);
    expect(await sign(key, id, 1_700_000_001, payload)).not.toBe(signature);
    expect(await sign(key, id, 1_700_000_000, new TextEncoder().encode(`${body} `))).not.toBe(signature);
  });
});

/** Headers as a sender built on a real library sends them. */
function sentBy(library: 'standardwebhooks' | 'svix', secret: string, at = new Date(), payload = body): Record<string, string> {
  const signer = library === 'svix' ? new SvixWebhook(secret) : new StandardWebhook(secret);
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signer.sign(id, at, payload) };
}

describe('verifyStandardWebhook', () => {
  const secret = newSecret();

  it.each(['standardwebhooks', 'svix'] as const)('accepts what the %s library signs, from Node headers, Fetch Headers, a string or bytes', async (library) => {
    const headers = sentBy(library, secret);
    expect(await verifyStandardWebhook(body, headers, secret)).toBe(true);
    expect(await verifyStandardWebhook(body, new Headers(headers), secret)).toBe(true);
    expect(await verifyStandardWebhook(new TextEncoder().encode(body), headers, secret)).toBe(true);
    // The spec's libraries also take the key without its prefix.
    expect(await verifyStandardWebhook(body, headers, secret.slice('whsec_'.length))).toBe(true);
  });

  it('takes a list of secrets: any one that signed is enough, and a signature by any listed secret', async () => {
    const previous = newSecret();
    const headers = sentBy('standardwebhooks', previous);
    expect(await verifyStandardWebhook(body, headers, [secret, previous])).toBe(true);
    expect(await verifyStandardWebhook(body, headers, [secret])).toBe(false);
    // A sender in a rotation signs with both: a receiver that knows either accepts.
    const both = { ...headers, 'webhook-signature': `${sentBy('standardwebhooks', secret)['webhook-signature']} ${headers['webhook-signature']}` };
    expect(await verifyStandardWebhook(body, both, secret)).toBe(true);
    expect(await verifyStandardWebhook(body, both, previous)).toBe(true);
    expect(await verifyStandardWebhook(body, both, newSecret())).toBe(false);
  });

  it('refuses a timestamp beyond the tolerance either way: a replay, or a clock far ahead', async () => {
    const sixMinutes = 6 * 60 * 1000;
    const old = sentBy('standardwebhooks', secret, new Date(Date.now() - sixMinutes));
    const ahead = sentBy('standardwebhooks', secret, new Date(Date.now() + sixMinutes));
    expect(await verifyStandardWebhook(body, old, secret)).toBe(false);
    expect(await verifyStandardWebhook(body, ahead, secret)).toBe(false);
    expect(await verifyStandardWebhook(body, old, secret, { tolerance: 2 * sixMinutes })).toBe(true);
    expect(await verifyStandardWebhook(body, ahead, secret, { tolerance: 2 * sixMinutes })).toBe(true);
  });

  it('refuses a changed body, id or timestamp, and the same JSON serialised again', async () => {
    const headers = sentBy('standardwebhooks', secret);
    expect(await verifyStandardWebhook(body.replace('u1', 'u2'), headers, secret)).toBe(false);
    expect(await verifyStandardWebhook(JSON.stringify(JSON.parse(body), null, 2), headers, secret)).toBe(false);
    expect(await verifyStandardWebhook(body, { ...headers, 'webhook-id': 'other' }, secret)).toBe(false);
    expect(await verifyStandardWebhook(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }, secret)).toBe(false);
  });

  const good = sentBy('standardwebhooks', secret);
  it.each([
    ['no headers', {}],
    ['no webhook-id', { ...good, 'webhook-id': undefined }],
    ['no webhook-signature', { ...good, 'webhook-signature': undefined }],
    ['a timestamp that is not a number', { ...good, 'webhook-timestamp': 'soon' }],
    ['a v2 signature', { ...good, 'webhook-signature': good['webhook-signature']!.replace('v1,', 'v2,') }],
    ['a truncated signature', { ...good, 'webhook-signature': good['webhook-signature']!.slice(0, -4) }],
    ['a signature that is not base64', { ...good, 'webhook-signature': 'v1,!!!!' }],
    ['a header sent twice', { ...good, 'webhook-signature': [good['webhook-signature']!, good['webhook-signature']!] }],
    // Node's req.headers and Fetch's Headers join a repeated header with ", ", which no signature holds.
    ['a header sent twice, joined as Node joins it', { ...good, 'webhook-signature': `v1,AAAA, ${good['webhook-signature']!}` }],
  ])('returns false for %s, without throwing', async (_label, headers) => {
    expect(await verifyStandardWebhook(body, headers as Record<string, string>, secret)).toBe(false);
  });

  it('returns false for a signature header Fetch joined from two', async () => {
    const headers = new Headers({ 'webhook-id': good['webhook-id']!, 'webhook-timestamp': good['webhook-timestamp']! });
    headers.append('webhook-signature', 'v1,AAAA');
    headers.append('webhook-signature', good['webhook-signature']!);
    expect(await verifyStandardWebhook(body, headers, secret)).toBe(false);
  });

  // A stranger may send hundreds of signatures in one header: each secret's HMAC is computed once
  // and compared with each of them, not computed again per signature.
  it('computes one HMAC per secret, however many signatures the header holds', async () => {
    const junk = Array.from({ length: 300 }, (_, n) => `v1,${btoa(String.fromCharCode(...Array.from({ length: 32 }, (_, i) => (n + i) % 256)))}`);
    const secrets = [newSecret(32), newSecret(32), secret];
    const headers = { ...good, 'webhook-signature': [...junk, good['webhook-signature']!].join(' ') };
    const sign = vi.spyOn(crypto.subtle, 'sign');
    const verify = vi.spyOn(crypto.subtle, 'verify');
    try {
      expect(await verifyStandardWebhook(body, headers, secrets)).toBe(true);
      expect(await verifyStandardWebhook(body, { ...headers, 'webhook-signature': junk.join(' ') }, secrets)).toBe(false);
      expect(sign.mock.calls.length + verify.mock.calls.length).toBe(2 * secrets.length);
    } finally {
      sign.mockRestore();
      verify.mockRestore();
    }
  });

  it('returns false for no secret, an empty or malformed one, and a body that is neither text nor bytes', async () => {
    for (const bad of ['', [], 'whsec_not base64!', [''], undefined as unknown as string]) {
      expect(await verifyStandardWebhook(body, good, bad)).toBe(false);
    }
    expect(await verifyStandardWebhook({} as string, good, secret)).toBe(false);
  });

  it('rejects with a ConfigError naming `tolerance` when it is not an integer >= 0', async () => {
    await expect(verifyStandardWebhook(body, good, secret, { tolerance: -1 })).rejects.toMatchObject({ name: 'ConfigError', option: 'tolerance' });
    await expect(verifyStandardWebhook(body, good, secret, { tolerance: 1.5 })).rejects.toMatchObject({ name: 'ConfigError', option: 'tolerance' });
  });
});
