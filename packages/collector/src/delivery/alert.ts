/** The alerts the collector sends. */
export const ALERT_TYPES = ['endpoint.failing', 'endpoint.disabled', 'endpoint.enabled', 'message.attempt.exhausted'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

/**
 * An operational webhook, as its receiver gets it (the body) and the page shows it: `type`, when it
 * was raised (`timestamp`, ISO 8601), and `data` about the URL (as shown: no credentials or query)
 * and, where there is one, the message.
 */
export interface Alert {
  /** Its `webhook-id`: unique per alert, the same on every attempt. */
  id: string;
  type: AlertType;
  timestamp: string;
  data: AlertData;
}

export interface AlertData {
  source: string;
  url: string;
  messageId?: string;
  /** The last failure: the HTTP status the URL answered, or the error when it did not answer. */
  lastStatus?: number;
  lastError?: string;
  failingSince?: string;
  /** `endpoint.failing`: failed attempts in a row. */
  failures?: number;
  disabledAt?: string;
  enabledAt?: string;
  /** `message.attempt.exhausted`: the attempts made, and when the message was accepted. */
  attempts?: number;
  receivedAt?: string;
}
