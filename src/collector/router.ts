import { randomUUID } from 'node:crypto';
import { isDestinationEnabled } from '../integrations.js';
import type { Message } from '../message.js';
import type { WebhookInput } from '../webhooks/body.js';
import { type PreparedWebhook, prepareWebhook } from '../webhooks/prepared.js';
import { displayUrl } from '../webhooks/settings.js';
import { type SourceConfig, WEBHOOKS } from './config.js';
import type { Deliverer } from './deliverer.js';
import type { EventHub, EventView, RouteView } from './events.js';
import type { AudienceRecord, Delivery, Store } from './store.js';

/** A message bound for one source, with where it goes. */
export interface Routed {
  source: SourceConfig;
  message: WebhookInput;
  routes: RouteView[];
}

/**
 * Where a message goes: the source's Webhooks destination, unless the source has none or the
 * message's integrations map disables it (the `All` rule, case-sensitive `Webhooks`).
 */
export function routeMessage(source: SourceConfig, message: WebhookInput): RouteView[] {
  const route = (reason?: string): RouteView[] =>
    reason === undefined ? [{ destination: WEBHOOKS, forwarded: true }] : [{ destination: WEBHOOKS, forwarded: false, reason }];
  if (source.webhooks === undefined) return route('the source has no Webhooks destination');
  if (message.type !== 'delete' && !isDestinationEnabled((message as Message).integrations, WEBHOOKS)) {
    return route('disabled by the message\'s integrations');
  }
  return route();
}

/**
 * The accept pipeline every route ends in: record what is to be delivered durably, show it in the
 * live debugger, then start delivering it.
 */
export class Router {
  readonly #store: Store;
  readonly #hub: EventHub;
  readonly #deliverer: Deliverer;
  readonly #sources: ReadonlyMap<string, SourceConfig>;
  /** Each source's webhook URLs as the page shows them, parsed once rather than for every event. */
  readonly #shownUrls = new Map<string, string[]>();

  constructor(store: Store, hub: EventHub, deliverer: Deliverer, sources: ReadonlyMap<string, SourceConfig>) {
    this.#store = store;
    this.#hub = hub;
    this.#deliverer = deliverer;
    this.#sources = sources;
  }

  /**
   * Accepts messages (and an audience's new state) all or nothing.
   * @throws {ValidationError} when a forwarded message has no webhook body (the routes validated it).
   * @throws what the store throws: then nothing is recorded, shown or forwarded.
   */
  async accept(items: readonly Routed[], origin: EventView['origin'], audience?: AudienceRecord): Promise<void> {
    const acceptedAt = Date.now();
    const deliveries: Delivery[] = [];
    const views: [EventView, PreparedWebhook | undefined][] = [];
    for (const { source, message, routes } of items) {
      const id = randomUUID();
      // The body is fixed now, with the acceptance time, and journaled as it will be sent.
      const webhook = routes.some((route) => route.forwarded) ? prepareWebhook(message, acceptedAt) : undefined;
      if (webhook) deliveries.push({ id, source: source.name, message, webhook });
      views.push([this.#view(id, source.name, message, origin, routes, acceptedAt), webhook]);
    }
    if (deliveries.length > 0 || audience !== undefined) await this.#store.accept(deliveries, audience);
    for (const [view, webhook] of views) this.#hub.add(view, webhook);
    for (const delivery of deliveries) this.#deliverer.start(delivery);
  }

  /**
   * Sends a kept event's webhook again, as a new delivery through the store and the usual queue:
   * the same `messageId` and body bytes (so the signature too), and a new retry window from now.
   * @returns the new delivery's id; undefined when the event is not kept or was not forwarded.
   * @throws what the store throws: then nothing is sent.
   */
  async redeliver(id: string): Promise<string | undefined> {
    const view = this.#hub.get(id);
    const sent = this.#hub.webhookOf(id);
    if (view === undefined || sent === undefined || !this.#sources.has(view.source)) return undefined;
    const delivery: Delivery = {
      id: randomUUID(),
      source: view.source,
      message: view.message as unknown as WebhookInput,
      webhook: { ...sent, receivedAt: Date.now() },
    };
    await this.#store.accept([delivery]);
    const again = this.#view(delivery.id, view.source, delivery.message, 'redelivery', view.routes, delivery.webhook.receivedAt);
    again.replayOf = id;
    this.#hub.add(again, delivery.webhook);
    this.#deliverer.start(delivery);
    return delivery.id;
  }

  /** Resumes deliveries a previous run left pending. */
  resume(pending: readonly Delivery[]): void {
    for (const delivery of pending) {
      const routes: RouteView[] = this.#sources.has(delivery.source)
        ? routeMessage(this.#sources.get(delivery.source)!, delivery.message)
        : [{ destination: WEBHOOKS, forwarded: false, reason: 'the source is no longer in the config' }];
      this.#hub.add(this.#view(delivery.id, delivery.source, delivery.message, 'replay', routes, delivery.webhook.receivedAt), delivery.webhook);
      this.#deliverer.start(delivery);
    }
  }

  #view(id: string, source: string, message: WebhookInput, origin: EventView['origin'], routes: RouteView[], at: number): EventView {
    const forwarded = routes.some((route) => route.forwarded);
    const urls = forwarded ? this.#shownUrlsOf(source) : [];
    return {
      id,
      receivedAt: new Date(at).toISOString(),
      source,
      origin,
      message: message as unknown as Record<string, unknown>,
      routes,
      status: forwarded ? 'pending' : 'not forwarded',
      webhooks: urls.map((url) => ({ url, status: 'pending', attempts: 0 })),
      attempts: [],
    };
  }

  #shownUrlsOf(source: string): string[] {
    let urls = this.#shownUrls.get(source);
    if (urls === undefined) {
      urls = (this.#sources.get(source)?.webhooks?.webhooks ?? []).map((webhook) => displayUrl(webhook.url));
      this.#shownUrls.set(source, urls);
    }
    return urls;
  }
}
