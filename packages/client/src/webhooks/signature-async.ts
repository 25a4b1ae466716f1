import { assertSignable, isCheckable, secretsOf } from './signature-format.js';

const encoder = new TextEncoder();

/**
 * `signBody` for runtimes without `node:crypto`: the same signature (lowercase hex HMAC-SHA1 of the
 * body's bytes under the shared secret) through Web Crypto, hence a promise.
 * @throws (rejects with) {ValidationError} when `body` is neither a string nor a Uint8Array.
 * @throws (rejects with) {ConfigError} when `secret` is not a non-empty string.
 * @example await signBodyAsync('{"type":"track"}', 'secret') // '2e88aac68ea7b39da724171f506ddb544ec37f6a'
 */
export async function signBodyAsync(body: string | Uint8Array, secret: string): Promise<string> {
  assertSignable(body, secret);
  const key = await hmacKey(secret, 'sign');
  const digest = new Uint8Array(await crypto.subtle.sign('HMAC', key, bytesOf(body)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * `verifySignature` for runtimes without `node:crypto` (the Edge Runtime; Workers without
 * `nodejs_compat`): the same answer from the same arguments, through Web Crypto, hence a promise.
 * Takes one secret or a list (a rotation's new and previous ones). Web Crypto's `verify` compares
 * the digests in constant time. Never rejects: a missing, malformed or wrongly typed argument, or
 * an empty secret (or list), is `false`.
 * @example
 * if (!(await verifySignatureAsync(await request.text(), request.headers.get('x-signature'), env.WEBHOOK_SECRET)))
 *   return new Response('bad signature', { status: 401 });
 */
export async function verifySignatureAsync(
  rawBody: string | Uint8Array,
  signature: string | readonly string[] | null | undefined,
  secretOrSecrets: string | readonly string[],
): Promise<boolean> {
  if (!isCheckable(rawBody, signature)) return false;
  const received = hexBytes(signature);
  const body = bytesOf(rawBody);
  const checks = secretsOf(secretOrSecrets).map(async (key) => crypto.subtle.verify('HMAC', await hmacKey(key, 'verify'), received, body));
  return (await Promise.all(checks)).includes(true);
}

function hmacKey(secret: string, use: 'sign' | 'verify'): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-1' }, false, [use]);
}

function bytesOf(body: string | Uint8Array): Uint8Array<ArrayBuffer> {
  return (typeof body === 'string' ? encoder.encode(body) : body) as Uint8Array<ArrayBuffer>;
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
