import { isCheckable } from './signature-format.js';

/**
 * `verifySignature` for runtimes without `node:crypto` (the Edge Runtime; Workers without
 * `nodejs_compat`): the same answer from the same arguments, through Web Crypto, hence a promise.
 * Web Crypto's `verify` compares the digests in constant time. Never rejects: a missing,
 * malformed or wrongly typed argument, or an empty secret, is `false`.
 * @example
 * if (!(await verifySignatureAsync(await request.text(), request.headers.get('x-signature'), env.WEBHOOK_SECRET)))
 *   return new Response('bad signature', { status: 401 });
 */
export async function verifySignatureAsync(
  rawBody: string | Uint8Array,
  signature: string | readonly string[] | null | undefined,
  secret: string,
): Promise<boolean> {
  if (!isCheckable(rawBody, signature, secret)) return false;
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-1' }, false, ['verify']);
  const data = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  return crypto.subtle.verify('HMAC', key, hexBytes(signature), data as Uint8Array<ArrayBuffer>);
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
