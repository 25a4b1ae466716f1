import type { AttemptRecord, DeliveryRecord, DeliveryState } from '../delivery/store.js';

/** One receiver's answer in one attempt, as `GET /v1/messages/<messageId>` shows it. */
export interface AttemptView {
  /** ISO 8601: when the request started. */
  at: string;
  attempt: number;
  url: string;
  status?: number;
  error?: string;
  durationMs: number;
}

/** A delivery of the message, as `GET /v1/messages/<messageId>` shows it. */
export interface DeliveryView {
  id: string;
  source: string;
  state: DeliveryState;
  /** ISO 8601: when the collector accepted it (the start of its retry window). */
  receivedAt: string;
  /** ISO 8601; absent while pending. */
  settledAt?: string;
  attempts: AttemptView[];
}

/** What `GET /v1/messages/<messageId>` answers: each delivery the store holds, in the order accepted. */
export interface MessageView {
  messageId: string;
  deliveries: DeliveryView[];
}

/** The store's records of a message, as the lookup route answers them (times as ISO 8601). */
export function describeMessage(messageId: string, records: readonly DeliveryRecord[]): MessageView {
  return {
    messageId,
    deliveries: records.map(({ delivery, state, settledAt, attempts }) => {
      const view: DeliveryView = { id: delivery.id, source: delivery.source, state, receivedAt: new Date(delivery.webhook.receivedAt).toISOString(), attempts: attempts.map(describeAttempt) };
      if (settledAt !== undefined) view.settledAt = new Date(settledAt).toISOString();
      return view;
    }),
  };
}

function describeAttempt({ at, attempt, url, status, error, durationMs }: AttemptRecord): AttemptView {
  const view: AttemptView = { at: new Date(at).toISOString(), attempt, url, durationMs };
  if (status !== undefined) view.status = status;
  if (error !== undefined) view.error = error;
  return view;
}
