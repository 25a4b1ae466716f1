import { log } from '../log.js';
import { WebhookDestination } from '../webhooks/destination.js';
import type { DeliveryOptions, SourceConfig } from './config.js';
import type { EventHub } from './events.js';
import type { Delivery, Store } from './store.js';

const NOT_NEEDED = 'not needed: another webhook accepted the message';

/**
 * Sends accepted deliveries through each source's Webhooks destination, settles them in the store
 * and reports every receiver's progress to the live debugger.
 *
 * Each source has one `WebhookDestination`, made on its first delivery: the destination bounds
 * the requests in progress per URL and backs off a failing URL on its own, so neither a slow URL
 * nor a busy source holds back the others. A delivery's retry window counts from its
 * `receivedAt`, so one resumed after a restart keeps its original deadline.
 */
export class Deliverer {
  readonly #sources: ReadonlyMap<string, SourceConfig>;
  readonly #options: DeliveryOptions;
  readonly #store: Store;
  readonly #hub: EventHub;
  readonly #destinations = new Map<string, WebhookDestination>();
  readonly #running = new Set<Promise<void>>();
  #closed = false;

  constructor(sources: ReadonlyMap<string, SourceConfig>, options: DeliveryOptions, store: Store, hub: EventHub) {
    this.#sources = sources;
    this.#options = options;
    this.#store = store;
    this.#hub = hub;
  }

  /** Starts delivering; the outcome is settled in the store and shown in the hub. Never throws. */
  start(delivery: Delivery): void {
    if (this.#closed) return;
    const destination = this.#destinationOf(delivery.source);
    const run =
      destination === undefined
        ? this.#drop(delivery)
        : destination.deliverPrepared(delivery.webhook, { id: delivery.id }).then(({ delivered }) => {
            // After close() the delivery stays pending in the store, for the next start.
            if (!this.#closed) return this.#settle(delivery, delivered);
          });
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }

  /**
   * Stops at once: aborts requests and retry waits. What was not delivered stays pending in the
   * store, for the next start. Idempotent.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#destinations.values()].map((destination) => destination.close()));
    await Promise.all(this.#running);
  }

  #destinationOf(name: string): WebhookDestination | undefined {
    let destination = this.#destinations.get(name);
    const settings = this.#sources.get(name)?.webhooks;
    if (destination === undefined && settings !== undefined) {
      destination = new WebhookDestination(settings, this.#options);
      this.#watch(destination);
      this.#destinations.set(name, destination);
    }
    return destination;
  }

  async #drop(delivery: Delivery): Promise<void> {
    log('collector: %s: source %s has no Webhooks destination any more; dropping it', delivery.id, delivery.source);
    await this.#settle(delivery, false);
  }

  async #settle(delivery: Delivery, delivered: boolean): Promise<void> {
    try {
      await this.#store.settle(delivery.id, delivered ? 'delivered' : 'failed');
    } catch (error) {
      // The delivery stays pending and is sent again after a restart: at-least-once.
      log('collector: could not record %s as settled: %O', delivery.id, error);
    }
  }

  /** Mirrors a destination's events onto each delivery's view in the live debugger. */
  #watch(destination: WebhookDestination): void {
    const hub = this.#hub;
    const unsettled = (id: string) =>
      hub.get(id)?.webhooks.flatMap((webhook, index) => (webhook.status === 'delivered' || webhook.status === 'skipped' ? [] : [index])) ?? [];
    destination.on('attempt', ({ id, index, attempt, ok, status, error, duration }) => {
      const webhook = hub.get(id)?.webhooks[index];
      hub.recordAttempt(id, { at: Date.now(), webhook: index, attempt, status, durationMs: duration, error: error?.message });
      const attempts = (webhook?.attempts ?? 0) + 1;
      if (ok) hub.updateWebhook(id, index, { status: 'delivered', attempts, httpStatus: status, note: undefined, nextAttemptAt: undefined });
      // A request that ends after another URL settled the delivery leaves the URL skipped.
      else if (webhook?.status === 'skipped') hub.updateWebhook(id, index, { attempts, httpStatus: status, note: `${error?.message}; ${NOT_NEEDED}` });
      else hub.updateWebhook(id, index, { attempts, httpStatus: status, note: error?.message });
    });
    destination.on('retry', ({ id, error, delay }) => {
      const nextAttemptAt = new Date(Date.now() + delay).toISOString();
      for (const { index, error: cause } of error.failures) {
        hub.updateWebhook(id, index, cause.retryable ? { status: 'retrying', note: cause.message, nextAttemptAt } : { status: 'failed', note: cause.message });
      }
    });
    destination.on('delivered', ({ id }) => {
      for (const index of unsettled(id)) {
        const why = hub.get(id)!.webhooks[index]!.note;
        hub.updateWebhook(id, index, { status: 'skipped', note: `${why ? `${why}; ` : ''}${NOT_NEEDED}`, nextAttemptAt: undefined });
      }
    });
    destination.on('failed', ({ id, error }) => {
      if (this.#closed) return;
      for (const index of unsettled(id)) {
        hub.updateWebhook(id, index, { status: 'failed', note: hub.get(id)!.webhooks[index]!.note ?? error.message, nextAttemptAt: undefined });
      }
    });
  }
}
