import { describeFilter, displayUrl, filterTakes, isoOf, type WebhookFilter } from 'batched-analytics/internal';
import { ALERTS_SOURCE, type SourceConfig, WEBHOOKS } from '../config/config.js';
import type { DeliveryEmitter, Entry, Route } from '../delivery/events.js';
import type { EventHub } from './events.js';
import { type EventView, outlineOf, type WebhookStatus, type WebhookView } from './views.js';

const NOT_NEEDED = 'not needed: another webhook accepted the message';
/** The note of a URL a delivery is kept for. */
const KEPT = 'kept: the URL is disabled; sent once it is enabled again';
/** The note of a URL whose filter does not take the message. */
const FILTERED_OUT = 'not sent: its filter does not take this message';
/** Webhook statuses a delivery's end leaves as they are. */
const SETTLED_WEBHOOK: ReadonlySet<WebhookStatus> = new Set(['delivered', 'skipped', 'filtered']);

/** A webhook URL as the page shows it, with its filter. */
interface ShownUrl {
  url: string;
  filter: Readonly<WebhookFilter> | undefined;
  /** The filter as the page reads it. */
  shown: string | undefined;
}

/**
 * What the live page shows of the delivery layer: it follows its events and keeps each event's
 * view in the hub up to date. The delivery layer does not know it is watched.
 */
export class PageFeed {
  readonly #hub: EventHub;
  #sources: ReadonlyMap<string, SourceConfig>;
  /** Each source's webhook URLs as the page shows them, parsed once rather than for every event. */
  readonly #shownUrls = new Map<string, ShownUrl[]>();
  constructor(options: { hub: EventHub; sources: ReadonlyMap<string, SourceConfig> }) {
    this.#hub = options.hub;
    this.#sources = options.sources;
  }

  /** Takes new sources (a config reload): events from now on are shown with them. */
  reconfigure(sources: ReadonlyMap<string, SourceConfig>): void {
    this.#sources = sources;
    this.#shownUrls.clear();
  }

  /** Shows what `events` tells from now on. */
  follow(events: DeliveryEmitter): void {
    const hub = this.#hub;
    events.on('accepted', (entries) => {
      for (const entry of entries) hub.add(this.#viewOf(entry));
    });
    events.on('duplicate', (repeats) => {
      // Forwarded nowhere, so the store has no delivery of it: the view keeps the whole message.
      for (const { entry, firstAcceptedAt } of repeats) hub.add(markRepeat(this.#viewOf(entry, true), firstAcceptedAt));
    });
    // A delivery this process claimed that it has not shown: accepted by another process sharing
    // the store, or before a restart. One it accepted and showed, that the page has stopped
    // keeping since (a backlog longer than the page keeps), is not shown again as a replay: each
    // would push out the next one still waiting, to be shown again in turn.
    events.on('claimed', ({ delivery, acceptedHere }) => {
      // The collector's own alerts are listed apart, not as messages.
      if (acceptedHere || hub.get(delivery.id) !== undefined || delivery.source === ALERTS_SOURCE) return;
      const source = this.#sources.get(delivery.source);
      const routes: Route[] =
        source === undefined
          ? [{ destination: WEBHOOKS, forwarded: false, reason: 'the source is no longer in the config' }]
          : source.webhooks === undefined
            ? [{ destination: WEBHOOKS, forwarded: false, reason: 'the source has no Webhooks destination' }]
            : [{ destination: WEBHOOKS, forwarded: true }];
      const { id, message, webhook } = delivery;
      hub.add(this.#viewOf({ id, source: delivery.source, message, origin: 'replay', routes, receivedAt: webhook.receivedAt }));
    });
    events.on('attempt', ({ id, index, attempt, ok, status, error }) => {
      const webhook = hub.get(id)?.webhooks[index];
      const attempts = (webhook?.attempts ?? 0) + 1;
      if (ok) hub.updateWebhook(id, index, { status: 'delivered', attempts, attempt, httpStatus: status, note: undefined, nextAttemptAt: undefined });
      // A request that fails after another URL settled the delivery: not retried, but failed, so that
      // a dead receiver shows as one.
      else if (webhook?.status === 'skipped') hub.updateWebhook(id, index, { status: 'failed', attempts, attempt, httpStatus: status, note: `${error?.message}; ${NOT_NEEDED}` });
      else hub.updateWebhook(id, index, { attempts, attempt, httpStatus: status, note: error?.message });
    });
    events.on('retry', ({ delivery, attempt, delay, failures }) => {
      const nextAttemptAt = new Date(Date.now() + delay).toISOString();
      for (const { index, retryable, message } of failures) {
        hub.updateWebhook(delivery.id, index, retryable ? { status: 'retrying', attempt, note: message, nextAttemptAt } : { status: 'failed', attempt, note: message });
      }
    });
    events.on('kept', ({ delivery, attempt, targets }) => {
      for (const index of targets) hub.updateWebhook(delivery.id, index, { status: 'retrying', attempt, note: KEPT, nextAttemptAt: undefined });
    });
    events.on('settled', ({ delivery, outcome, error }) => {
      const view = hub.get(delivery.id);
      view?.webhooks.forEach((webhook, index) => {
        if (SETTLED_WEBHOOK.has(webhook.status)) return;
        const why = webhook.note;
        // Every request it answered so far failed (else it would be delivered): failed, not retried.
        if (outcome === 'delivered') hub.updateWebhook(delivery.id, index, { status: webhook.attempts > 0 ? 'failed' : 'skipped', note: `${why ? `${why}; ` : ''}${NOT_NEEDED}`, nextAttemptAt: undefined });
        else hub.updateWebhook(delivery.id, index, { status: 'failed', note: why ?? error?.message, nextAttemptAt: undefined });
      });
    });
  }

  /** An entry's view: a forwarded message's outline (the store has the whole of it), unless `whole`. */
  #viewOf(entry: Entry, whole = false): EventView {
    const { id, source, message, origin, routes, receivedAt } = entry;
    const forwarded = routes.some((route) => route.forwarded);
    const urls = forwarded ? this.#shownUrlsOf(source) : [];
    const accepted = message as unknown as Record<string, unknown>;
    const view: EventView = {
      id,
      // The entries of one acceptance share their time: formatted once (see isoOf).
      receivedAt: isoOf(receivedAt),
      source,
      origin,
      message: forwarded && !whole ? outlineOf(accepted) : accepted,
      routes,
      status: forwarded ? 'pending' : 'not forwarded',
      webhooks: urls.map((url) => webhookView(url, message)),
    };
    if (entry.replayOf !== undefined) view.replayOf = entry.replayOf;
    return view;
  }

  #shownUrlsOf(source: string): ShownUrl[] {
    let urls = this.#shownUrls.get(source);
    if (urls === undefined) {
      urls = (this.#sources.get(source)?.webhooks?.webhooks ?? []).map(({ url, filter }) => ({ url: displayUrl(url), filter, shown: filter && describeFilter(filter) }));
      this.#shownUrls.set(source, urls);
    }
    return urls;
  }
}

/** A URL's view of a new message: `filtered` (never sent) when its filter does not take it. */
function webhookView({ url, filter, shown }: ShownUrl, message: Entry['message']): WebhookView {
  if (filter === undefined) return { url, status: 'pending', attempts: 0 };
  const event = message.type === 'track' ? (message.event as string) : undefined;
  return filterTakes(filter, message.type, event)
    ? { url, status: 'pending', attempts: 0, filter: shown }
    : { url, status: 'filtered', attempts: 0, filter: shown, note: FILTERED_OUT };
}

/**
 * Shows an event as a repeat: forwarded nowhere, saying of which acceptance. It was answered 200,
 * and nothing of it recorded.
 */
function markRepeat(view: EventView, firstAt: number): EventView {
  const first = new Date(firstAt).toISOString();
  view.duplicateOf = { firstAcceptedAt: first };
  view.routes = view.routes.map(({ destination }) => ({
    destination,
    forwarded: false,
    reason: `a duplicate: messageId ${JSON.stringify(view.message.messageId)} was first accepted at ${first}`,
  }));
  view.status = 'not forwarded';
  view.webhooks = [];
  return view;
}
