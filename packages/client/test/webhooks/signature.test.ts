import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signBody, signBodyAsync, verifySignature, verifySignatureAsync } from '../../src/webhooks/index.js';

const body = '{"version":1,"type":"track","userId":"u1","event":"Café ☕","properties":{}}';
const secret = 'shh';

// signBodyAsync (Web Crypto) must give exactly what signBody (node:crypto) gives.
describe.each([
  ['signBody', async (...args: Parameters<typeof signBody>) => signBody(...args)],
  ['signBodyAsync', signBodyAsync],
])('%s', (_name, sign) => {
  it('is the lowercase hex HMAC-SHA1 of the UTF-8 body under the secret', async () => {
    const expected = createHmac('sha1', secret).update(Buffer.from(body, 'utf8')).digest('hex');
    expect(await sign(body, secret)).toBe(expected);
  });

  it('gives a string and its UTF-8 bytes the same signature', async () => {
    expect(await sign(new TextEncoder().encode(body), secret)).toBe(await sign(body, secret));
  });

  it('matches a known vector', async () => {
    expect(await sign('{"type":"track"}', 'secret')).toBe('2e88aac68ea7b39da724171f506ddb544ec37f6a');
  });

  it('refuses an empty secret and a body that is not text or bytes', async () => {
    await expect(sign(body, '')).rejects.toMatchObject({ name: 'ConfigError', option: 'secret' });
    await expect(sign({} as string, secret)).rejects.toMatchObject({ name: 'ValidationError', field: 'body' });
  });
});

// The Web Crypto form must give the same answer as the node:crypto one on every case.
describe.each([
  ['verifySignature', async (...args: Parameters<typeof verifySignature>) => verifySignature(...args)],
  ['verifySignatureAsync', verifySignatureAsync],
])('%s', (_name, verify) => {
  const signature = signBody(body, secret);

  it('accepts the signature of the exact bytes, as a string or a Buffer', async () => {
    expect(await verify(body, signature, secret)).toBe(true);
    expect(await verify(Buffer.from(body), signature, secret)).toBe(true);
    expect(await verify(body, signature.toUpperCase(), secret)).toBe(true);
  });

  it('rejects a changed body, another secret, or another signature', async () => {
    expect(await verify(body.replace('u1', 'u2'), signature, secret)).toBe(false);
    expect(await verify(body, signature, 'other')).toBe(false);
    expect(await verify(body, signBody('{}', secret), secret)).toBe(false);
  });

  it('takes a list of secrets (a rotation\'s new and previous ones): any one that signed is enough', async () => {
    expect(await verify(body, signature, ['new', secret])).toBe(true);
    expect(await verify(body, signature, [secret, 'new'])).toBe(true);
    expect(await verify(body, signature, ['new', 'newer'])).toBe(false);
    expect(await verify(body, signature, [])).toBe(false);
    // An empty entry is skipped, not a key anyone could sign with.
    expect(await verify(body, createHmac('sha1', '').update(body).digest('hex'), ['', 'new'])).toBe(false);
  });

  it('rejects the same JSON serialised again with other spacing', async () => {
    const reserialised = JSON.stringify(JSON.parse(body), null, 2);
    expect(await verify(reserialised, signature, secret)).toBe(false);
  });

  it.each([
    ['a missing header', undefined],
    ['a null header', null],
    ['an empty header', ''],
    ['a truncated signature', signature.slice(0, 39)],
    ['a too long signature', `${signature}00`],
    ['non-hex digits', `${signature.slice(0, 39)}z`],
    ['a sha1= prefix', `sha1=${signature}`],
    ['an array of headers', [signature]],
    ['a number', 42 as unknown as string],
  ])('returns false for %s, without throwing', async (_label, bad) => {
    expect(await verify(body, bad, secret)).toBe(false);
  });

  it('returns false for an empty or missing secret and for a body that is not text or bytes', async () => {
    const unsigned = createHmac('sha1', '').update(body).digest('hex');
    expect(await verify(body, unsigned, '')).toBe(false);
    expect(await verify(body, signature, undefined as unknown as string)).toBe(false);
    expect(await verify({ toString: () => body } as unknown as string, signature, secret)).toBe(false);
    expect(await verify(null as unknown as string, signature, secret)).toBe(false);
  });
});
