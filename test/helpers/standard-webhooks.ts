import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';

/** A fresh Standard Webhooks secret, as the spec defines them: `whsec_` and base64 of random bytes. */
export function newSecret(bytes = 32): string {
  return `whsec_${randomBytes(bytes).toString('base64')}`;
}

/** The receivers' own libraries, not ours: what a customer's receiver would run. */
export const REAL_VERIFIERS = {
  standardwebhooks: (secret: string) => new StandardWebhook(secret),
  svix: (secret: string) => new SvixWebhook(secret),
} as const;

export type VerifierName = keyof typeof REAL_VERIFIERS;

/** The three Standard Webhooks headers as the verifiers take them; a header sent twice is left out. */
export function standardHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = headers[name];
    if (typeof value === 'string') picked[name] = value;
  }
  return picked;
}

/** Whether the named real verifier accepts a received request under any of `secrets` (they throw on refusal). */
export function realVerifierAccepts(name: VerifierName, secrets: readonly string[], body: string | Buffer, headers: IncomingHttpHeaders): boolean {
  return secrets.some((secret) => {
    try {
      REAL_VERIFIERS[name](secret).verify(body, standardHeaders(headers));
      return true;
    } catch {
      return false;
    }
  });
}
