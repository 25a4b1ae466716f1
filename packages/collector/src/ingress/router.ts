import { randomUUID } from 'node:crypto';
import { audienceSync, audienceTrait, displayUrl, filterTakes, isDestinationEnabled, type Message, prepareWebhook, type WebhookInput } from 'batched-analytics/internal';
import { type SourceConfig, WEBHOOKS } from '../config/config.js';
import { type Entry, NO_FILTER_TAKES, type Origin, type Route } from '../delivery/events.js';
import type { Intake } from '../delivery/intake.js';
import type { Delivery, DeliveryRecord, DeliveryRecords } from '../delivery/store.js';
import type { RecoverRequest } from './recover.js';

/** A message bound for one source, with where it goes. */
export interface Routed {
  source: SourceConfig;
  message: WebhookInput;
  routes: Route[];
}

/**
 * Where a message goes: the source's Webhooks destination, unless the source has none, the
 * message's integrations map disables it (the `All` rule, case-sensitive `Webhooks`), or no URL's
 * `filter` takes it.
 */
export function routeMessage(source: SourceConfig, message: WebhookInput): Route[] {
  const route = (reason?: string): Route[] =>
    reason === undefined ? [{ destination: WEBHOOKS, forwarded: true }] : [{ destination: WEBHOOKS, forwarded: false, reason }];
  if (source.webhooks === undefined) return route('the source has no Webhooks destination');
  if (message.type !== 'delete' && !isDestinationEnabled((message as Message).integrations, WEBHOOKS)) {
    return route('disabled by the message\'s integrations');
  }
  const event = message.type === 'track' ? ((message as Message).event as string) : undefined;
  if (!source.webhooks.webhooks.some(({ filter }) => filterTakes(filter, message.type, event))) {
    return [{ destination: WEBHOOKS, forwarded: false, reason: NO_FILTER_TAKES, filtered: true }];
  }
  return route();
}

/** An audience sync as recorded: its plan, and what the routes answer. */
export interface AudienceSyncOutcome {
  /** Members after the sync. */
  members: number;
  joined: number;
  left: number;
}

/**
 * Turns what the routes validated into entries (each forwarded one with its webhook, its body
 * fixed now with the acceptance time) and hands them to the delivery intake.
 */
export class Router {
  readonly #intake: Intake;
  readonly #records: DeliveryRecords;
  #sources: ReadonlyMap<string, SourceConfig>;

  constructor(options: { intake: Intake; records: DeliveryRecords; sources: ReadonlyMap<string, SourceConfig> }) {
    this.#intake = options.intake;
    this.#records = options.records;
    this.#sources = options.sources;
  }

  /** Takes new sources (a config reload): redeliveries from now on go to them. */
  reconfigure(sources: ReadonlyMap<string, SourceConfig>): void {
    this.#sources = sources;
  }

  /**
   * Accepts messages all or nothing. Those of the ingestion API (`origin` `api`) are de-duplicated
   * per source on `messageId` by the store: a repeat within its window is forwarded nowhere.
   * Deletions are not: each request is a request of its own.
   * @param receivedAt when the request arrived, in ms since the epoch, as the messages' own
   * `receivedAt` says (their webhooks and the page then say the same); @default now
   * @throws what the store throws: then nothing is recorded, shown or forwarded.
   */
  accept(items: readonly Routed[], origin: Origin, receivedAt?: number): Promise<void> {
    const entries = plan(items, origin, receivedAt);
    return origin === 'api' ? this.#intake.ingest(entries) : this.#intake.accept(entries);
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
    const planned = await this.#intake.syncAudience(source.name, name, (previous) => {
      const sync = audienceSync(name, userIds, previous);
      const items = sync.messages.map((message) => ({ source, message, routes: routeMessage(source, message) }));
      const joined = sync.messages.filter((m) => (m.traits as Record<string, unknown>)[trait] === true).length;
      return { entries: plan(items, 'audience'), state: sync.state, joined };
    });
    return { members: planned.state.members.length, joined: planned.joined, left: planned.entries.length - planned.joined };
  }

  /**
   * Sends a delivery the store holds (pending, or settled within `retention.keepFor`) again, as a
   * new delivery through the store and the usual queue: the same `messageId` and body bytes (so the
   * signature too), routed as its source routes it now, with a new retry window from now.
   * @returns the new delivery's id; undefined when the store holds no such delivery, or its source
   * is gone or forwards it nowhere now.
   * @throws what the store throws: then nothing is sent.
   */
  async redeliver(id: string): Promise<string | undefined> {
    const record = await this.#records.find(id);
    const source = record === undefined ? undefined : this.#sources.get(record.delivery.source);
    const entry = record === undefined || source === undefined ? undefined : redelivery(source, record);
    if (entry === undefined) return undefined;
    await this.#intake.accept([entry]);
    return entry.id;
  }

  /**
   * Sends again, once, every delivery of a source given up within [`since`, `until`): to the URL
   * at `target` (those that failed for it, or were given up before any attempt), or to each URL
   * its source routes it to now. What a recovery, here or in another process, sent is not sent again.
   * @returns how many.
   * @throws what the store throws.
   */
  recover({ source, target, since, until }: RecoverRequest): Promise<number> {
    const webhook = target === undefined ? undefined : source.webhooks!.webhooks[target]!;
    const url = webhook === undefined ? undefined : displayUrl(webhook.url);
    return this.#intake.recover({ source: source.name, since, until }, (record) => {
      if (webhook !== undefined) {
        // What the deliverer's filters read too: the webhook's type and, for a track, its event.
        const { type, event } = record.delivery.webhook;
        if (!filterTakes(webhook.filter, type, event)) return undefined;
        if (record.attempts.length > 0 && !record.attempts.some((attempt) => attempt.url === url)) return undefined;
      }
      return redelivery(source, record, target);
    });
  }
}

/**
 * A delivery the store holds, sent again as a new one: the same `messageId` and body bytes (so the
 * signature too), routed as its source routes it now, a new retry window from now; to the webhook
 * at `target` only when given. Undefined when the source forwards it nowhere now.
 */
function redelivery(source: SourceConfig, record: DeliveryRecord, target?: number): Entry | undefined {
  const { message, webhook } = record.delivery;
  const routes = routeMessage(source, message);
  if (!routes.some((route) => route.forwarded)) return undefined;
  const receivedAt = Date.now();
  const delivery: Delivery = { id: randomUUID(), source: source.name, message, webhook: { ...webhook, receivedAt } };
  if (target !== undefined) delivery.targets = [target];
  return { id: delivery.id, source: source.name, message, origin: 'redelivery', routes, receivedAt, delivery, replayOf: record.delivery.id };
}

/** The entries of routed messages, each forwarded one with its delivery. */
function plan(items: readonly Routed[], origin: Origin, acceptedAt = Date.now()): Entry[] {
  return items.map(({ source, message, routes }) => {
    const id = randomUUID();
    const entry: Entry = { id, source: source.name, message, origin, routes, receivedAt: acceptedAt };
    if (routes.some((route) => route.forwarded)) entry.delivery = { id, source: source.name, message, webhook: prepareWebhook(message, acceptedAt) };
    return entry;
  });
}
