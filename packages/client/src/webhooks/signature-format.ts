// What the Node and the Web Crypto signatures share; nothing here may import `node:*`.
import { describe } from '../core/describe.js';
import { ConfigError, ValidationError } from '../core/errors.js';

/** The request header that carries the signature (lower case, as `node:http` exposes it). */
export const SIGNATURE_HEADER = 'x-signature';

/** A SHA-1 digest is 20 bytes: 40 hex digits. */
const SIGNATURE_PATTERN = /^[0-9a-f]{40}$/i;

/**
 * Refuses what cannot be signed, with the errors `signBody` and `signBodyAsync` document.
 * @throws {ValidationError} when `body` is neither a string nor a Uint8Array.
 * @throws {ConfigError} when `secret` is not a non-empty string.
 */
export function assertSignable(body: unknown, secret: unknown): asserts body is string | Uint8Array {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    throw new ValidationError('body', `Expected \`body\` to be a string or a Uint8Array, got ${describe(body)}`);
  }
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new ConfigError('secret', `Expected \`secret\` to be a non-empty string, got ${describe(secret)}`);
  }
}

/** Whether the body and signature can be checked at all; anything else is simply not a valid signature. */
export function isCheckable(rawBody: unknown, signature: unknown): signature is string {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false;
  return typeof signature === 'string' && SIGNATURE_PATTERN.test(signature);
}

/**
 * The secrets worth trying from one secret or a list (a rotation's new and previous ones): an
 * empty key would let anyone who knows the body compute the signature, so empty ones are left out.
 */
export function secretsOf(secretOrSecrets: unknown): string[] {
  const list: unknown[] = Array.isArray(secretOrSecrets) ? secretOrSecrets : [secretOrSecrets];
  return list.filter((secret): secret is string => typeof secret === 'string' && secret.length > 0);
}
