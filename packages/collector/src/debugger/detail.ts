import { displayUrl, type PreparedWebhook, SIGNATURE_HEADER, signBody, USER_AGENT, type WebhookSettings } from 'batched-analytics/internal';
import type { EventView } from './views.js';

/** What the configured header values are replaced with: they may hold a receiver's credentials. */
export const HIDDEN = '(hidden: set in the config)';

/** How the page explains `X-Signature`, so a receiver's author can check their own computation. */
export const SIGNATURE_HOW =
  "HMAC-SHA1 of the body's exact bytes (as shown, UTF-8), keyed with the source's sharedSecret (not shown), as lowercase hex";

/** The detail view of one event: the exact request each receiver got, headers and all. */
export interface EventDetail {
  event: EventView;
  /** The body sent to every receiver, byte for byte; absent when the event was not forwarded. */
  body?: string;
  requests: { url: string; headers: Record<string, string> }[];
  signature?: { header: string; value: string; how: string };
}

/** Builds an event's detail: headers as sent, but configured values hidden; the shared secret never appears. */
export function describeEvent(event: EventView, webhook: PreparedWebhook | undefined, settings: WebhookSettings | undefined): EventDetail {
  if (webhook === undefined || settings === undefined) return { event, requests: [] };
  const { sharedSecret } = settings;
  const signature = sharedSecret === undefined ? undefined : { header: SIGNATURE_HEADER, value: signBody(webhook.body, sharedSecret), how: SIGNATURE_HOW };
  const requests = settings.webhooks.map(({ url, headers = {} }) => ({
    url: displayUrl(url),
    headers: {
      ...Object.fromEntries(Object.keys(headers).map((name) => [name.toLowerCase(), HIDDEN])),
      'user-agent': USER_AGENT,
      'content-type': 'application/json',
      ...(signature ? { [signature.header]: signature.value } : {}),
    },
  }));
  return { event, body: webhook.body, requests, ...(signature ? { signature } : {}) };
}
