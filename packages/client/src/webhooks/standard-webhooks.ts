// Standard Webhooks through Web Crypto, for every runtime (the verify entry imports it): checking a
// received request, and the signing the web build of the destination uses.
import { integer } from '../core/validate.js';
import { secretsOf } from './signature-format.js';
import {
  decodeBase64,
  secretKey,
  signedPrefix,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from './standard-format.js';

/** Options of {@link verifyStandardWebhook}. */
export interface StandardWebhookVerifyOptions {
  /**
   * How far, in ms, `webhook-timestamp` may be from this machine's clock, either way: a request
   * captured and sent again later than that is refused.
   * @default 300000 (5 minutes, as the spec's libraries)
   */
  tolerance?: number;
}

/** Defaults of {@link StandardWebhookVerifyOptions}, declared once. */
export const STANDARD_WEBHOOK_VERIFY_DEFAULTS = { tolerance: 5 * 60 * 1000 } as const;

/** A request's headers: a Fetch `Headers`, or Node's `req.headers`. */
export type ReceivedHeaders = { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

const encoder = new TextEncoder();
/** An HMAC-SHA256 digest in base64: 32 bytes. */
const DIGEST_BYTES = 32;
const TIMESTAMP = /^\d{1,12}$/;
/** The destination signs every request with the same few keys: imported once each. */
const signingKeys = new WeakMap<Uint8Array, Promise<CryptoKey>>();

/**
 * Checks a received Standard Webhooks request: whether `webhook-signature` holds a `v1` signature
 * of `webhook-id.webhook-timestamp.body` under `secretOrSecrets` (one secret, or any of a list:
 * while a secret is rotated, pass the new one and the previous one), and whether
 * `webhook-timestamp` is within `tolerance` of now. Pass the body exactly as it arrived.
 *
 * Works in every runtime (Web Crypto), hence a promise. Each secret's HMAC is computed once and
 * compared with each signature of the header in constant time.
 * Never rejects for what a request holds: missing or repeated headers, a malformed signature or
 * secret, an old timestamp are all `false`.
 * @throws (rejects with) {ConfigError} when `options.tolerance` is not an integer >= 0.
 * @example
 * if (!(await verifyStandardWebhook(await request.text(), request.headers, [env.WEBHOOK_SECRET, env.WEBHOOK_SECRET_PREVIOUS])))
 *   return new Response('bad signature', { status: 401 });
 */
export async function verifyStandardWebhook(
  rawBody: string | Uint8Array,
  headers: ReceivedHeaders,
  secretOrSecrets: string | readonly string[],
  options: StandardWebhookVerifyOptions = {},
): Promise<boolean> {
  const tolerance = integer('tolerance', options.tolerance ?? STANDARD_WEBHOOK_VERIFY_DEFAULTS.tolerance, 0);
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false;
  const id = headerOf(headers, WEBHOOK_ID_HEADER);
  const timestamp = headerOf(headers, WEBHOOK_TIMESTAMP_HEADER);
  const signed = headerOf(headers, WEBHOOK_SIGNATURE_HEADER) ?? '';
  // Node's req.headers and Fetch's Headers join a header sent twice with ", ", which no list of
  // signatures holds: which one was meant?
  if (signed.includes(', ')) return false;
  const signatures = signed
    .split(' ')
    .map((entry) => (entry.startsWith('v1,') ? decodeBase64(entry.slice(3)) : undefined))
    .filter((signature): signature is Uint8Array<ArrayBuffer> => signature?.length === DIGEST_BYTES);
  if (!id || timestamp === undefined || !TIMESTAMP.test(timestamp) || signatures.length === 0) return false;
  if (Math.abs(Date.now() - Number(timestamp) * 1000) > tolerance) return false;
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const content = concat(encoder.encode(signedPrefix(id, timestamp)), body);
  const keys = secretsOf(secretOrSecrets).flatMap((text) => secretKey(text) ?? []);
  // One HMAC per secret, compared with every signature: a header may hold hundreds of them.
  const checks = keys.map(async (bytes) => {
    const key = await crypto.subtle.importKey('raw', bytes as Uint8Array<ArrayBuffer>, HMAC, false, ['sign']);
    const digest = new Uint8Array(await crypto.subtle.sign('HMAC', key, content));
    return signatures.some((signature) => sameBytes(digest, signature));
  });
  return (await Promise.all(checks)).includes(true);
}

/** The destination's Standard Webhooks signature where `node:crypto` is missing: base64 HMAC-SHA256. */
export async function signStandardAsync(key: Uint8Array, id: string, timestamp: number, payload: Uint8Array): Promise<string> {
  let imported = signingKeys.get(key);
  if (imported === undefined) {
    imported = crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, HMAC, false, ['sign']);
    signingKeys.set(key, imported);
  }
  const digest = new Uint8Array(await crypto.subtle.sign('HMAC', await imported, concat(encoder.encode(signedPrefix(id, timestamp)), payload)));
  let binary = '';
  for (const byte of digest) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const HMAC = { name: 'HMAC', hash: 'SHA-256' } as const;

/** One header's value; a header sent twice (an array) is no value: which one was signed? */
function headerOf(headers: ReceivedHeaders, name: string): string | undefined {
  if (headers === null || typeof headers !== 'object') return undefined;
  const value = typeof headers.get === 'function' ? (headers as { get(name: string): string | null }).get(name) : (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** Whether two digests of {@link DIGEST_BYTES} are equal, in a time that does not depend on where they differ. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let differ = 0;
  for (let i = 0; i < DIGEST_BYTES; i++) differ |= a[i]! ^ b[i]!;
  return differ === 0;
}

function concat(head: Uint8Array, tail: Uint8Array): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(head.length + tail.length);
  bytes.set(head);
  bytes.set(tail, head.length);
  return bytes;
}
