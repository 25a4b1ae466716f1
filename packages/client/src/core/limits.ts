/** Limits of the ingestion API. */
export const LIMITS = {
  /** Largest serialised message, in bytes. */
  messageBytes: 32_000,
  /** Largest request body, in bytes. */
  batchBytes: 500_000,
  /**
   * Longest `messageId`, in characters: the service's own limit. It becomes a webhook's
   * `webhook-id` header and the path of `GET /v1/messages/<messageId>`, which a longer one could
   * push past a server's header limit (16 KB in Node), and a receiver's refusal loses the message.
   */
  messageIdLength: 100,
} as const;
