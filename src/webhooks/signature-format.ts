// What the Node and the Web Crypto signature checks share; nothing here may import `node:*`.

/** The request header that carries the signature (lower case, as `node:http` exposes it). */
export const SIGNATURE_HEADER = 'x-signature';

/** A SHA-1 digest is 20 bytes: 40 hex digits. */
const SIGNATURE_PATTERN = /^[0-9a-f]{40}$/i;

/** Whether the arguments can be checked at all; anything else is simply not a valid signature. */
export function isCheckable(rawBody: unknown, signature: unknown, secret: unknown): signature is string {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false;
  if (typeof signature !== 'string' || !SIGNATURE_PATTERN.test(signature)) return false;
  // An empty key would let anyone who knows the body compute the signature.
  return typeof secret === 'string' && secret.length > 0;
}
