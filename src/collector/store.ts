import { AnalyticsError } from '../errors.js';
import type { AudienceState } from '../webhooks/audience.js';
import type { WebhookInput } from '../webhooks/body.js';
import type { PreparedWebhook } from '../webhooks/prepared.js';

/** One message accepted for one source's Webhooks destination, until it is delivered or given up. */
export interface Delivery {
  /** Unique per delivery (a message sent to two sources is two deliveries). */
  id: string;
  /** The source's `name`. */
  source: string;
  /** The validated message, or a deletion request, as the live debugger shows it. */
  message: WebhookInput;
  /**
   * What every attempt sends, fixed when the collector accepted the message: its `messageId`,
   * `type`, the exact body bytes, and `receivedAt` (ms since the epoch, the start of its retry
   * window). A store keeps it as it is, so that repeats and restarts send the same bytes.
   */
  webhook: PreparedWebhook;
}

/** An audience's membership as of its latest sync, for the source it was synced to. */
export interface AudienceRecord {
  source: string;
  state: AudienceState;
}

/** What the store held when it was opened. */
export interface StoreSnapshot {
  /** Deliveries accepted but not yet settled, in the order they were accepted. */
  pending: Delivery[];
  audiences: AudienceRecord[];
}

/** How a delivery ended. */
export type Outcome = 'delivered' | 'failed';

/**
 * Where the collector keeps what must survive a crash: deliveries not yet settled, and the latest
 * state of each audience. The collector is its only user and calls it from one process. Two
 * implementations: the file journal (the default) and PostgreSQL; both pass one contract suite
 * (test/collector/store-contract.ts).
 */
export interface Store {
  /** Recovers what the previous run left; called once, before any other method. */
  open(): Promise<StoreSnapshot>;
  /**
   * Records deliveries, and optionally an audience's new state, all or nothing. Resolves only once
   * they are durable: the collector answers 200 after this, never before.
   */
  accept(deliveries: readonly Delivery[], audience?: AudienceRecord): Promise<void>;
  /** Marks a delivery settled so it is not replayed. Losing this in a crash only causes a repeat. */
  settle(id: string, outcome: Outcome): Promise<void>;
  /** The state an audience's latest sync left; absent before its first sync. */
  audience(source: string, name: string): AudienceState | undefined;
  /** Writes what is buffered and releases the store; later calls reject. Idempotent. */
  close(): Promise<void>;
}

/** What every store's calls reject with once it is closed: the same code whichever store it is. */
export function storeClosedError(): AnalyticsError {
  return new AnalyticsError('The store is closed', { code: 'ERR_STORE_CLOSED' });
}

/** The key of an audience in a store's in-memory map: audiences are per source. */
export function audienceKey(source: string, name: string): string {
  return JSON.stringify([source, name]);
}
