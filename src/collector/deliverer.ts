import { Agent } from 'undici';
import { log } from '../log.js';
import { Queue } from '../queue.js';
import { WebhookDestination } from '../webhooks/destination.js';
import { WEBHOOK_DEFAULTS } from '../webhooks/settings.js';
import type { DeliveryOptions, SourceConfig } from './config.js';
import type { EventHub } from './events.js';
import type { Delivery, Store } from './store.js';

/**
 * Deliveries of one source in progress at once; later ones wait their turn in acceptance order.
 * Without a bound, a backlog (a restart after an outage) would open a connection per message.
 */
export const MAX_IN_PROGRESS = 64;

/** One source's deliveries: those waiting their turn, and how many are in progress. */
interface Lane {
  waiting: Queue<Delivery>;
  inProgress: number;
}

/**
 * Sends accepted deliveries through each source's Webhooks destination, settles them in the store
 * and reports every receiver's progress to the live debugger.
 *
 * Each delivery gets a `WebhookDestination` of its own, sharing one connection pool: its retry
 * window is what remains of the delivery's 4 hours since it was accepted, so a delivery resumed
 * after a restart keeps its original deadline.
 */
export class Deliverer {
  readonly #sources: ReadonlyMap<string, SourceConfig>;
  readonly #options: DeliveryOptions;
  readonly #store: Store;
  readonly #hub: EventHub;
  /** Verifies certificates explicitly, as the destination's own agent does (spec §7). */
  readonly #agent = new Agent({ connect: { rejectUnauthorized: true }, keepAliveTimeout: 4_000 });
  readonly #active = new Set<WebhookDestination>();
  readonly #running = new Set<Promise<void>>();
  readonly #lanes = new Map<string, Lane>();
  #closed = false;

  constructor(sources: ReadonlyMap<string, SourceConfig>, options: DeliveryOptions, store: Store, hub: EventHub) {
    this.#sources = sources;
    this.#options = options;
    this.#store = store;
    this.#hub = hub;
  }

  /**
   * Delivers as soon as fewer than {@link MAX_IN_PROGRESS} of the source's deliveries are in
   * progress; the outcome is settled in the store and shown in the hub. Never throws.
   */
  start(delivery: Delivery): void {
    let lane = this.#lanes.get(delivery.source);
    if (lane === undefined) {
      lane = { waiting: new Queue(), inProgress: 0 };
      this.#lanes.set(delivery.source, lane);
    }
    lane.waiting.push(delivery);
    this.#pump(lane);
  }

  /**
   * Stops at once: aborts requests and retry waits. What was not delivered stays pending in the
   * store, for the next start. Idempotent.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#active].map((destination) => destination.close()));
    await Promise.all(this.#running);
    await this.#agent.close();
  }

  #pump(lane: Lane): void {
    while (!this.#closed && lane.inProgress < MAX_IN_PROGRESS && lane.waiting.length > 0) {
      const run = this.#run(lane.waiting.shift()!);
      lane.inProgress += 1;
      this.#running.add(run);
      void run.finally(() => {
        lane.inProgress -= 1;
        this.#running.delete(run);
        this.#pump(lane);
      });
    }
  }

  async #run(delivery: Delivery): Promise<void> {
    const settings = this.#sources.get(delivery.source)?.webhooks;
    if (settings === undefined || this.#closed) {
      if (settings === undefined) {
        log('collector: %s: source %s has no Webhooks destination any more; dropping it', delivery.id, delivery.source);
        await this.#settle(delivery, false);
      }
      return;
    }
    const retryWindow = this.#options.retryWindow ?? WEBHOOK_DEFAULTS.retryWindow;
    const destination = new WebhookDestination(settings, {
      ...this.#options,
      // Never negative: a delivery whose window passed while the collector was down gets one attempt.
      retryWindow: Math.max(0, delivery.acceptedAt + retryWindow - Date.now()),
      dispatcher: this.#agent,
    });
    this.#active.add(destination);
    this.#watch(delivery.id, destination);
    try {
      const result = await destination.deliver(delivery.message);
      if (!this.#closed) await this.#settle(delivery, result.delivered);
    } catch (error) {
      // Only a message without a webhook form throws, and the router never accepts one.
      log('collector: %s cannot be delivered: %O', delivery.id, error);
      await this.#settle(delivery, false);
    } finally {
      this.#active.delete(destination);
      await destination.close();
    }
  }

  async #settle(delivery: Delivery, delivered: boolean): Promise<void> {
    try {
      await this.#store.settle(delivery.id, delivered ? 'delivered' : 'failed');
    } catch (error) {
      // The delivery stays pending and is sent again after a restart: at-least-once.
      log('collector: could not record %s as settled: %O', delivery.id, error);
    }
  }

  /** Mirrors the destination's events onto the delivery's view in the live debugger. */
  #watch(id: string, destination: WebhookDestination): void {
    const hub = this.#hub;
    const unsettled = () => hub.get(id)?.webhooks.flatMap((webhook, index) => (webhook.status === 'delivered' ? [] : [index])) ?? [];
    destination.on('attempt', ({ index, ok, status, error }) => {
      const attempts = (hub.get(id)?.webhooks[index]?.attempts ?? 0) + 1;
      hub.updateWebhook(id, index, ok ? { status: 'delivered', attempts, httpStatus: status, note: undefined } : { attempts, httpStatus: status, note: error?.message });
    });
    destination.on('retry', ({ error, delay }) => {
      for (const { index, error: cause } of error.failures) {
        hub.updateWebhook(
          id,
          index,
          cause.retryable ? { status: 'retrying', note: `${cause.message}; next attempt in ${delay} ms` } : { status: 'failed', note: cause.message },
        );
      }
    });
    destination.on('delivered', () => {
      for (const index of unsettled()) {
        const why = hub.get(id)!.webhooks[index]!.note;
        hub.updateWebhook(id, index, { status: 'failed', note: `${why ? `${why}; ` : ''}not retried: another webhook accepted the message` });
      }
    });
    destination.on('failed', ({ error }) => {
      if (this.#closed) return;
      for (const index of unsettled()) hub.updateWebhook(id, index, { status: 'failed', note: hub.get(id)!.webhooks[index]!.note ?? error.message });
    });
  }
}
