// The twin of signature.ts for runtimes without `node:crypto` (the Edge Runtime, Workers without
// `nodejs_compat`): Web Crypto signs and verifies only asynchronously, so the synchronous forms say
// which asynchronous one to use instead.
import { AnalyticsError } from '../core/errors.js';
import { signBodyAsync } from './signature-async.js';
import { signStandardAsync } from './standard-webhooks.js';

export { SIGNATURE_HEADER } from './signature-format.js';

export function signBody(_body: string | Uint8Array, _secret: string): string {
  throw unsupported('signBody', 'signBodyAsync');
}

export function verifySignature(_rawBody: string | Uint8Array, _signature: string | readonly string[] | null | undefined, _secretOrSecrets: string | readonly string[]): boolean {
  throw unsupported('verifySignature', 'verifySignatureAsync');
}

export function signPayload(payload: Uint8Array, secret: string): string | Promise<string> {
  return signBodyAsync(payload, secret);
}

export function signStandard(key: Uint8Array, id: string, timestamp: number, payload: Uint8Array): string | Promise<string> {
  return signStandardAsync(key, id, timestamp, payload);
}

function unsupported(name: string, instead: string): AnalyticsError {
  return new AnalyticsError(`${name} needs node:crypto, which this runtime lacks: use ${instead} (a promise), from 'batched-analytics/webhooks'`, {
    code: 'ERR_UNSUPPORTED_RUNTIME',
  });
}
