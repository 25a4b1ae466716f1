import { createHmac, type Hmac, timingSafeEqual } from 'node:crypto';
import { assertSignable, isCheckable, secretsOf } from './signature-format.js';
import { signedPrefix } from './standard-format.js';

export { SIGNATURE_HEADER } from './signature-format.js';

/**
 * Signs a webhook body as the destination does: the lowercase hex HMAC-SHA1 of the
 * body's bytes, keyed by the shared secret. A string is signed as its UTF-8 bytes.
 * @throws {ValidationError} when `body` is neither a string nor a Uint8Array.
 * @throws {ConfigError} when `secret` is not a non-empty string.
 * @example signBody('{"type":"track"}', 'secret') // '2e88aac68ea7b39da724171f506ddb544ec37f6a'
 */
export function signBody(body: string | Uint8Array, secret: string): string {
  assertSignable(body, secret);
  return hmac(body, secret).digest('hex');
}

/**
 * Checks a received webhook: whether `signature` (the `X-Signature` header) is the HMAC-SHA1 of
 * `rawBody` under `secretOrSecrets`, one secret or any of a list: while a secret is rotated, pass
 * the new one and the previous one, so that requests signed with either pass. Pass the body
 * exactly as it arrived; JSON parsed and serialised again may differ in spacing, key order or
 * escapes, and then no longer matches.
 *
 * Compares in constant time, so the response time tells an attacker nothing about how much of a
 * forged signature was right. Never throws: a missing, malformed or wrongly typed argument, or an
 * empty secret (or list), is simply `false`. It takes `req.headers['x-signature']` as it comes: an array
 * (the header sent twice) is `false` too.
 * @example
 * if (!verifySignature(rawBody, req.headers['x-signature'], process.env.WEBHOOK_SECRET)) res.statusCode = 401;
 */
export function verifySignature(
  rawBody: string | Uint8Array,
  signature: string | readonly string[] | null | undefined,
  secretOrSecrets: string | readonly string[],
): boolean {
  if (!isCheckable(rawBody, signature)) return false;
  const received = Buffer.from(signature, 'hex');
  // Every secret is tried, a match or not: the time taken says nothing about which one matched.
  return secretsOf(secretOrSecrets).reduce((matched, key) => timingSafeEqual(received, hmac(rawBody, key).digest()) || matched, false);
}

/**
 * How a Webhooks destination signs each body: synchronously here; `signature.web.ts`, its twin for
 * runtimes without `node:crypto`, through Web Crypto (a promise).
 */
export function signPayload(payload: Uint8Array, secret: string): string | Promise<string> {
  return hmac(payload, secret).digest('hex');
}

/**
 * How a Webhooks destination signs for Standard Webhooks: the base64 HMAC-SHA256 of
 * `id.timestamp.body` under a secret's key; `signature.web.ts` does it through Web Crypto.
 */
export function signStandard(key: Uint8Array, id: string, timestamp: number, payload: Uint8Array): string | Promise<string> {
  return createHmac('sha256', key).update(signedPrefix(id, timestamp)).update(payload).digest('base64');
}

/**
 * The HMAC-SHA1 of `body` under `secret`, to be digested. Signing asks it for hex text itself: a
 * third less CPU than its bytes turned into hex afterwards.
 */
function hmac(body: string | Uint8Array, secret: string): Hmac {
  return createHmac('sha1', secret).update(body);
}
