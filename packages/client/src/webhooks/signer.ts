import type { ResolvedWebhookConfig } from './settings.js';
import { SIGNATURE_HEADER, signPayload, signStandard } from './signature.js';
import { secretKey, WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './standard-format.js';

const NONE: Readonly<Record<string, string>> = Object.freeze({});

/** The signature headers of a destination's requests, by its `sharedSecret` and `standardWebhooks`. */
export class RequestSigner {
  /** The first `sharedSecret`: while rotating, the new one; the others only say what receivers still accept. */
  readonly #sharedSecret: string | undefined;
  /** The keys of the Standard Webhooks secrets, decoded once. */
  readonly #keys: readonly Uint8Array[];

  constructor(config: Pick<ResolvedWebhookConfig, 'sharedSecrets' | 'standardSecrets'>) {
    this.#sharedSecret = config.sharedSecrets[0];
    this.#keys = config.standardSecrets.map((secret) => secretKey(secret)!);
  }

  /** Whether requests carry a signature: unsigned, a body is sent as the text it is, never encoded first. */
  get signs(): boolean {
    return this.#sharedSecret !== undefined || this.#keys.length > 0;
  }

  /** `X-Signature`: it signs the body alone, so it is the same on every attempt and made once per delivery. */
  async bodyHeaders(payload: Uint8Array): Promise<Readonly<Record<string, string>>> {
    return this.#sharedSecret === undefined ? NONE : { [SIGNATURE_HEADER]: await signPayload(payload, this.#sharedSecret) };
  }

  /**
   * The Standard Webhooks headers of one request, made as it leaves: `webhook-timestamp` is when
   * it was sent, which a receiver compares with its clock, and a request may have waited long for
   * its turn. One `v1` signature per secret, so a receiver that knows any one of them accepts it.
   */
  requestHeaders(id: string, payload: Uint8Array): Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>> {
    if (this.#keys.length === 0) return NONE;
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = (signatures: string[]) => ({
      [WEBHOOK_ID_HEADER]: id,
      [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
      [WEBHOOK_SIGNATURE_HEADER]: signatures.map((signature) => `v1,${signature}`).join(' '),
    });
    const signatures = this.#keys.map((key) => signStandard(key, id, timestamp, payload));
    return signatures.every((signature) => typeof signature === 'string') ? headers(signatures as string[]) : Promise.all(signatures).then(headers);
  }
}
