/** Limits of the ingestion API. */
export const LIMITS = {
  /** Largest serialised message, in bytes. */
  messageBytes: 32_000,
  /** Largest request body, in bytes. */
  batchBytes: 500_000,
} as const;
