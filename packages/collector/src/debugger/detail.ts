import {
  displayUrl,
  SIGNATURE_HEADER,
  signBody,
  USER_AGENT,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type WebhookSettings,
} from 'batched-analytics/internal';
import type { AttemptRecord, DeliveryRecord, DeliveryState } from '../delivery/store.js';
import type { EventView } from './views.js';

/** What the configured header values are replaced with: they may hold a receiver's credentials. */
export const HIDDEN = '(hidden: set in the config)';

/** How the page explains `X-Signature`, so a receiver's author can check their own computation. */
export const SIGNATURE_HOW =
  "HMAC-SHA1 of the body's exact bytes (as shown, UTF-8), keyed with the source's sharedSecret (the first when it lists several; not shown), as lowercase hex";

/** What the page shows for the two Standard Webhooks headers that each request sets as it leaves. */
export const PER_REQUEST = {
  timestamp: '(set as each request leaves: its time, in seconds since the epoch)',
  signature: (secrets: number) =>
    `(set as each request leaves: ${secrets === 1 ? 'v1,<signature>' : `${secrets} entries v1,<signature>, one per secret,`} the base64 HMAC-SHA256 of "webhook-id.webhook-timestamp.body")`,
} as const;

/** How the page explains the Standard Webhooks headers. */
export const STANDARD_WEBHOOKS_HOW =
  "webhook-signature holds, for each of the source's standardWebhooks secrets (not shown), v1, and the base64 HMAC-SHA256 of webhook-id, a dot, webhook-timestamp, a dot and the body's exact bytes, keyed with the base64-decoded part of the secret after whsec_";

/**
 * The detail view of one event: the exact request each receiver got, headers and all, and every
 * request made, from the store's record of its delivery (whichever collector made them).
 */
export interface EventDetail {
  /** The event, with the whole message as the store keeps it when it holds its delivery (the view keeps an outline). */
  event: EventView;
  /** Where its delivery stands in the store; absent when it was not forwarded, or the store no longer holds it. */
  state?: DeliveryState;
  /** Every request made, oldest first: when it started (ms since the epoch), to which URL, and what came back. */
  attempts: AttemptRecord[];
  /** The body sent to every receiver, byte for byte; absent when the event was not forwarded. */
  body?: string;
  requests: { url: string; headers: Record<string, string> }[];
  signature?: { header: string; value: string; how: string };
  /** Present when the source sends Standard Webhooks headers. */
  standardWebhooks?: { how: string };
}

/** Builds an event's detail: headers as sent, but configured values hidden; no secret ever appears. */
export function describeEvent(view: EventView, record: DeliveryRecord | undefined, settings: WebhookSettings | undefined): EventDetail {
  if (record === undefined) return { event: view, attempts: [], requests: [] };
  // The view keeps a forwarded message's outline; the store, the whole message.
  const event = { ...view, message: record.delivery.message as unknown as Record<string, unknown> };
  const { state, attempts } = record;
  const { webhook } = record.delivery;
  if (settings === undefined) return { event, state, attempts, requests: [] };
  const [sharedSecret] = [settings.sharedSecret ?? []].flat();
  const signature = sharedSecret === undefined ? undefined : { header: SIGNATURE_HEADER, value: signBody(webhook.body, sharedSecret), how: SIGNATURE_HOW };
  const secrets = settings.standardWebhooks?.secrets.length ?? 0;
  const standard: Record<string, string> =
    secrets === 0
      ? {}
      : {
          [WEBHOOK_ID_HEADER]: webhook.messageId,
          [WEBHOOK_TIMESTAMP_HEADER]: PER_REQUEST.timestamp,
          [WEBHOOK_SIGNATURE_HEADER]: PER_REQUEST.signature(secrets),
        };
  const requests = settings.webhooks.map(({ url, headers = {} }) => ({
    url: displayUrl(url),
    headers: {
      ...Object.fromEntries(Object.keys(headers).map((name) => [name.toLowerCase(), HIDDEN])),
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
      ...(signature ? { [signature.header]: signature.value } : {}),
      ...standard,
    },
  }));
  return {
    event,
    state,
    attempts,
    body: webhook.body,
    requests,
    ...(signature ? { signature } : {}),
    ...(secrets > 0 ? { standardWebhooks: { how: STANDARD_WEBHOOKS_HOW } } : {}),
  };
}
