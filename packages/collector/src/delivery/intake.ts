import type { AudienceState } from 'batched-analytics/internal';
import type { Deliverer } from './deliverer.js';
import type { DeliveryEmitter, Entry } from './events.js';
import type { Arrival, Claimed, Delivery, DeliveryRecord, RecoverQuery, Store } from './store.js';

/** What an audience sync's plan returns: the entries of its identify calls, and the new membership. */
export interface AudienceEntries {
  entries: Entry[];
  state: AudienceState;
}

/**
 * Where ingress hands what it validated: each acceptance is recorded in the store (claiming as
 * much of it as the deliverer has room for), told to the watchers as `accepted` (or `duplicate`),
 * and what was claimed is attempted at once; the rest waits in the store for whichever process has
 * room. The one way into delivery: nothing here calls back up.
 */
export class Intake {
  readonly #store: Store;
  readonly #deliverer: Deliverer;
  readonly #events: DeliveryEmitter;
  readonly #lease: number;

  constructor(options: { store: Store; deliverer: Deliverer; events: DeliveryEmitter; lease: number }) {
    this.#store = options.store;
    this.#deliverer = options.deliverer;
    this.#events = options.events;
    this.#lease = options.lease;
  }

  /**
   * Records entries all or nothing; deletions and redeliveries are not de-duplicated.
   * @throws what the store throws: then nothing is recorded, told or delivered.
   */
  async accept(entries: readonly Entry[]): Promise<void> {
    const deliveries = deliveriesOf(entries);
    const claimed = deliveries.length === 0 ? [] : await this.#store.accept(deliveries, this.#claiming());
    this.#started(entries, deliveries.length, claimed);
  }

  /**
   * Records what the ingestion routes took through the store's de-duplication per source on
   * `messageId`: a repeat is told as `duplicate`, and recorded and forwarded nowhere.
   * @throws what the store throws: then nothing is recorded, told or delivered.
   */
  async ingest(entries: readonly Entry[]): Promise<void> {
    const arrivals: Arrival[] = entries.map((entry) => {
      const messageId = entry.message.messageId;
      // The routes validated a messageId into every message; an entry's id never repeats otherwise.
      return { source: entry.source, messageId: typeof messageId === 'string' ? messageId : entry.id, delivery: entry.delivery };
    });
    const { claimed, repeats } = await this.#store.ingest(arrivals, this.#claiming());
    let deliveries = 0;
    arrivals.forEach((arrival, index) => {
      if (arrival.delivery !== undefined && repeats[index] === undefined) deliveries += 1;
    });
    // Told in the order they came, a run of recorded entries or of repeats at a time: the page
    // shows a batch's repeat after its first.
    let start = 0;
    for (let end = 1; end <= entries.length; end++) {
      const repeat = repeats[start] !== undefined;
      if (end < entries.length && (repeats[end] !== undefined) === repeat) continue;
      if (repeat) this.#events.emit('duplicate', entries.slice(start, end).map((entry, i) => ({ entry, firstAcceptedAt: repeats[start + i]! })));
      else this.#events.emit('accepted', entries.slice(start, end));
      start = end;
    }
    this.#deliverer.take(claimed, deliveries - claimed.length);
  }

  /**
   * Runs an audience sync in one transaction with any other sync of it (in any process), as
   * {@link Store.syncAudience} does, and delivers its identify calls.
   * @throws what `plan` or the store throws: then nothing is recorded.
   */
  async syncAudience<P extends AudienceEntries>(source: string, name: string, plan: (previous: AudienceState | undefined) => P): Promise<P> {
    const { plan: made, claimed } = await this.#store.syncAudience(
      source,
      name,
      (previous) => {
        const planned = plan(previous);
        return { planned, state: planned.state, deliveries: deliveriesOf(planned.entries) };
      },
      this.#claiming(),
    );
    this.#started(made.planned.entries, made.deliveries.length, claimed);
    return made.planned;
  }

  /**
   * Sends again, once, the deliveries the store gave up within `query`'s window, as
   * {@link Store.recover} does: `redeliver` makes each one's entry (with its new delivery), or
   * undefined to leave it. The ones recorded are told as `accepted` and delivered.
   * @returns how many were recorded.
   * @throws what the store throws: then what it had not recorded is not sent.
   */
  async recover(query: RecoverQuery, redeliver: (record: DeliveryRecord) => Entry | undefined): Promise<number> {
    const entries = new Map<string, Entry>();
    const { claimed, recorded } = await this.#store.recover(
      query,
      (record) => {
        const entry = redeliver(record);
        if (entry?.delivery === undefined) return undefined;
        entries.set(entry.delivery.id, entry);
        return entry.delivery;
      },
      this.#claiming(),
    );
    this.#started(
      recorded.map(({ id }) => entries.get(id)!),
      recorded.length,
      claimed,
    );
    return recorded.length;
  }

  /** What an acceptance claims: as many deliveries as the deliverer has room for. */
  #claiming(): { claim: number; lease: number } {
    return { claim: this.#deliverer.room(), lease: this.#lease };
  }

  #started(entries: readonly Entry[], deliveries: number, claimed: Claimed[]): void {
    if (entries.length > 0) this.#events.emit('accepted', entries);
    this.#deliverer.take(claimed, deliveries - claimed.length);
  }
}

function deliveriesOf(entries: readonly Entry[]): Delivery[] {
  const deliveries: Delivery[] = [];
  for (const entry of entries) if (entry.delivery !== undefined) deliveries.push(entry.delivery);
  return deliveries;
}
