import { randomUUID } from 'node:crypto';
import { type AudienceState, audienceSync, audienceTrait, describeFilter, displayUrl, filterTakes, isDestinationEnabled, type Message, type PreparedWebhook, prepareWebhook, type WebhookFilter, type WebhookInput } from 'batched-analytics/internal';
import { type SourceConfig, WEBHOOKS } from '../config/config.js';
import type { Deliverer } from '../delivery/deliverer.js';
import type { EventHub } from '../debugger/events.js';
import type { EventView, RouteView } from '../debugger/views.js';
import type { Arrival, AudiencePlan, Claimed, Delivery, Store } from '../delivery/store.js';
import type { CollectorMetrics } from '../observe/metrics.js';

/** What an acceptance records and shows. */
interface Planned extends Pick<AudiencePlan, 'deliveries'> {
  /** Per message: its view, and its webhook and delivery when it is forwarded. */
  views: [EventView, PreparedWebhook | undefined, Delivery?][];
}

/** A webhook URL as the page shows it, with its filter. */
interface ShownUrl {
  url: string;
  filter: WebhookFilter | undefined;
  /** The filter as the page reads it. */
  shown: string | undefined;
}

/** The note of a URL whose filter does not take the message. */
const FILTERED_OUT = 'not sent: its filter does not take this message';

/** A message bound for one source, with where it goes. */
export interface Routed {
  source: SourceConfig;
  message: WebhookInput;
  routes: RouteView[];
}

/** Why a message is forwarded nowhere when each URL of its source has a `filter` and none takes it. */
const NO_TAKER = 'no webhook URL\'s filter takes it';

/**
 * Where a message goes: the source's Webhooks destination, unless the source has none, the
 * message's integrations map disables it (the `All` rule, case-sensitive `Webhooks`), or no URL's
 * `filter` takes it.
 */
export function routeMessage(source: SourceConfig, message: WebhookInput): RouteView[] {
  const route = (reason?: string): RouteView[] =>
    reason === undefined ? [{ destination: WEBHOOKS, forwarded: true }] : [{ destination: WEBHOOKS, forwarded: false, reason }];
  if (source.webhooks === undefined) return route('the source has no Webhooks destination');
  if (message.type !== 'delete' && !isDestinationEnabled((message as Message).integrations, WEBHOOKS)) {
    return route('disabled by the message\'s integrations');
  }
  const event = eventOf(message);
  if (!source.webhooks.webhooks.some(({ filter }) => filterTakes(filter, message.type, event))) return route(NO_TAKER);
  return route();
}

/** A track's `event`, which URL filters look at. */
function eventOf(message: WebhookInput): string | undefined {
  return message.type === 'track' ? ((message as Message).event as string) : undefined;
}

/**
 * Shows an event as a repeat: forwarded nowhere, saying of which acceptance. It is counted as
 * de-duplicated, not as accepted: it was answered 200, and nothing of it recorded.
 */
function markRepeat(view: EventView, firstAt: number): void {
  const first = new Date(firstAt).toISOString();
  view.duplicateOf = { firstAcceptedAt: first };
  view.routes = view.routes.map(({ destination }) => ({
    destination,
    forwarded: false,
    reason: `a duplicate: messageId ${JSON.stringify(view.message.messageId)} was first accepted at ${first}`,
  }));
  view.status = 'not forwarded';
  view.webhooks = [];
}

/** An audience sync as recorded: its plan, and what the routes answer. */
export interface AudienceSyncOutcome {
  /** Members after the sync. */
  members: number;
  joined: number;
  left: number;
}

/**
 * The accept pipeline every route ends in: record what is to be delivered durably (claiming as
 * much of it as this process has room for), show it in the live debugger, then deliver what was
 * claimed; the rest waits in the store for whichever process has room.
 */
export class Router {
  readonly #store: Store;
  readonly #hub: EventHub;
  readonly #deliverer: Deliverer;
  #sources: ReadonlyMap<string, SourceConfig>;
  readonly #lease: number;
  readonly #metrics: CollectorMetrics | undefined;
  /** Each source's webhook URLs as the page shows them, parsed once rather than for every event. */
  readonly #shownUrls = new Map<string, ShownUrl[]>();

  /** @param options.metrics where accepted messages are counted; @default none */
  constructor(options: { store: Store; hub: EventHub; deliverer: Deliverer; sources: ReadonlyMap<string, SourceConfig>; lease: number; metrics?: CollectorMetrics }) {
    this.#store = options.store;
    this.#hub = options.hub;
    this.#deliverer = options.deliverer;
    this.#sources = options.sources;
    this.#lease = options.lease;
    this.#metrics = options.metrics;
  }

  /** Takes new sources (a config reload): messages accepted from now on are routed and shown with them. */
  reconfigure(sources: ReadonlyMap<string, SourceConfig>): void {
    this.#sources = sources;
    this.#shownUrls.clear();
  }

  /**
   * Accepts messages all or nothing. Those of the ingestion API (`origin` `api`) are de-duplicated
   * per source on `messageId` by the store: a repeat within its window is shown as one, counted,
   * and forwarded nowhere. Deletions are not: each request is a request of its own.
   * @param receivedAt when the request arrived, in ms since the epoch, as the messages' own
   * `receivedAt` says (their webhooks and the page then say the same); @default now
   * @throws {ValidationError} when a forwarded message has no webhook body (the routes validated it).
   * @throws what the store throws: then nothing is recorded, shown or forwarded.
   */
  async accept(items: readonly Routed[], origin: EventView['origin'], receivedAt?: number): Promise<void> {
    const planned = this.#plan(items, origin, receivedAt);
    if (origin === 'api') return this.#ingest(planned);
    if (planned.deliveries.length === 0) return this.#show(planned, []);
    this.#show(planned, await this.#store.accept(planned.deliveries, this.#claiming()));
  }

  /** Records through the store's de-duplication; repeats are shown as such and forwarded nowhere. */
  async #ingest(planned: Planned): Promise<void> {
    const arrivals: Arrival[] = planned.views.map(([view, , delivery]) => {
      const messageId = view.message.messageId;
      // The routes validated a messageId into every message; a view's id never repeats otherwise.
      return { source: view.source, messageId: typeof messageId === 'string' ? messageId : view.id, delivery };
    });
    const { claimed, repeats } = await this.#store.ingest(arrivals, this.#claiming());
    const deliveries: Delivery[] = [];
    const views = planned.views.map(([view, webhook, delivery], index): Planned['views'][number] => {
      const firstAt = repeats[index];
      if (firstAt === undefined) {
        if (delivery !== undefined) deliveries.push(delivery);
        return [view, webhook, delivery];
      }
      markRepeat(view, firstAt);
      return [view, undefined];
    });
    this.#show({ deliveries, views }, claimed);
  }

  /**
   * Syncs an audience to `source` in one transaction with any other sync of it (in any process):
   * the previous membership is read, the identify calls for what changed are recorded with the new
   * membership, all or nothing.
   * @throws {ValidationError} from `audienceSync` (a bad user id, or a stored state that is not the audience's).
   * @throws what the store throws: then nothing is recorded.
   */
  async syncAudience(source: SourceConfig, name: string, userIds: Iterable<string>): Promise<AudienceSyncOutcome> {
    const trait = audienceTrait(name);
    const { plan, claimed } = await this.#store.syncAudience(
      source.name,
      name,
      (previous: AudienceState | undefined) => {
        const sync = audienceSync(name, userIds, previous);
        const items = sync.messages.map((message) => ({ source, message, routes: routeMessage(source, message) }));
        return { ...this.#plan(items, 'audience'), state: sync.state, joined: sync.messages.filter((m) => (m.traits as Record<string, unknown>)[trait] === true).length };
      },
      this.#claiming(),
    );
    this.#show(plan, claimed);
    return { members: plan.state.members.length, joined: plan.joined, left: plan.views.length - plan.joined };
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
    const again = this.#view(delivery.id, view.source, delivery.message, 'redelivery', view.routes, delivery.webhook.receivedAt);
    again.replayOf = id;
    this.#show({ deliveries: [delivery], views: [[again, delivery.webhook]] }, await this.#store.accept([delivery], this.#claiming()));
    return delivery.id;
  }

  /**
   * Shows a delivery this process claimed that its hub does not hold: accepted by another process
   * sharing the store, or before a restart.
   */
  showClaimed(delivery: Delivery): void {
    if (this.#hub.get(delivery.id) !== undefined) return;
    const source = this.#sources.get(delivery.source);
    const routes: RouteView[] = source
      ? routeMessage(source, delivery.message)
      : [{ destination: WEBHOOKS, forwarded: false, reason: 'the source is no longer in the config' }];
    this.#hub.add(this.#view(delivery.id, delivery.source, delivery.message, 'replay', routes, delivery.webhook.receivedAt), delivery.webhook);
  }

  /** The deliveries and views of routed messages, bodies fixed now with the acceptance time. */
  #plan(items: readonly Routed[], origin: EventView['origin'], acceptedAt = Date.now()): Planned {
    const planned: Planned = { deliveries: [], views: [] };
    for (const { source, message, routes } of items) {
      const id = randomUUID();
      const webhook = routes.some((route) => route.forwarded) ? prepareWebhook(message, acceptedAt) : undefined;
      const delivery = webhook && { id, source: source.name, message, webhook };
      if (delivery) planned.deliveries.push(delivery);
      planned.views.push([this.#view(id, source.name, message, origin, routes, acceptedAt), webhook, delivery]);
    }
    return planned;
  }

  /** What an acceptance claims: as many deliveries as this process has room for. */
  #claiming(): { claim: number; lease: number } {
    return { claim: this.#deliverer.room(), lease: this.#lease };
  }

  /** Once recorded: shows the events, and delivers what was claimed. */
  #show(planned: Planned, claimed: Claimed[]): void {
    // Counted per run of one source (a batch is one): a labelled increment costs more than a loop step.
    const runs = { accepted: { source: '', count: 0 }, deduplicated: { source: '', count: 0 }, filtered: { source: '', count: 0 } };
    const count = (kind: keyof typeof runs, source: string) => {
      const run = runs[kind];
      if (source !== run.source) {
        if (run.count > 0) this.#metrics?.[kind](run.source, run.count);
        runs[kind] = { source, count: 1 };
      } else run.count += 1;
    };
    for (const [view, webhook] of planned.views) {
      this.#hub.add(view, webhook);
      count(view.duplicateOf === undefined ? 'accepted' : 'deduplicated', view.source);
      if (view.routes[0]?.reason === NO_TAKER) count('filtered', view.source);
    }
    for (const [kind, run] of Object.entries(runs) as [keyof typeof runs, { source: string; count: number }][]) {
      if (run.count > 0) this.#metrics?.[kind](run.source, run.count);
    }
    this.#deliverer.take(claimed, planned.deliveries.length - claimed.length);
  }

  #view(id: string, source: string, message: WebhookInput, origin: EventView['origin'], routes: RouteView[], at: number): EventView {
    const forwarded = routes.some((route) => route.forwarded);
    const urls = forwarded ? this.#shownUrlsOf(source) : [];
    const event = eventOf(message);
    return {
      id,
      receivedAt: new Date(at).toISOString(),
      source,
      origin,
      message: message as unknown as Record<string, unknown>,
      routes,
      status: forwarded ? 'pending' : 'not forwarded',
      webhooks: urls.map(({ url, filter, shown }) =>
        filter === undefined
          ? { url, status: 'pending', attempts: 0 }
          : filterTakes(filter, message.type, event)
            ? { url, status: 'pending', attempts: 0, filter: shown }
            : { url, status: 'filtered', attempts: 0, filter: shown, note: FILTERED_OUT },
      ),
      attempts: [],
    };
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
