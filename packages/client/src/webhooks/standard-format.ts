// What signing and checking Standard Webhooks (https://www.standardwebhooks.com) share, in every
// runtime; nothing here may import `node:*`.

/** The message's id: the same on every attempt, so a receiver can de-duplicate. */
export const WEBHOOK_ID_HEADER = 'webhook-id';
/** When the request was sent, in seconds since the epoch: what a receiver checks for replays. */
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
/** `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, one per secret, separated by spaces. */
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

/** The prefix the spec gives a secret; what follows is the key, in base64. */
export const SECRET_PREFIX = 'whsec_';

/** The spec's key lengths, in bytes: shorter is guessable, longer adds nothing to HMAC-SHA256. */
export const SECRET_BYTES = { min: 24, max: 64 } as const;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard base64 to bytes, or undefined when it is not base64. */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (!BASE64.test(text)) return undefined;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * The HMAC key of a `whsec_…` secret, or undefined when it is not one. A receiver also gets keys
 * without the prefix, as the spec's own libraries accept them; the sender's settings require it.
 */
export function secretKey(secret: unknown): Uint8Array | undefined {
  if (typeof secret !== 'string') return undefined;
  const key = decodeBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  return key !== undefined && key.length > 0 ? key : undefined;
}

/** What is signed: `id.timestamp.` and then the body's exact bytes. */
export function signedPrefix(id: string, timestamp: number | string): string {
  return `${id}.${timestamp}.`;
}
