import { AnalyticsError, type AudienceState, type PreparedWebhook, type WebhookInput } from 'batched-analytics/internal';
import type { Client, Pool } from 'pg';
import type { UrlStates } from './url-states.js';

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
  /**
   * The webhooks (positions in the source's `webhooks`) its first attempt asks, as a recovery for
   * one URL sends it; absent: every URL of the source whose `filter` takes it.
   */
  targets?: number[];
}

/** An audience's membership as of its latest sync, for the source it was synced to. */
export interface AudienceRecord {
  source: string;
  state: AudienceState;
}

/** What the store held when it was opened. */
export interface StoreSnapshot {
  /** Deliveries accepted and not yet settled (by any process sharing the store). */
  pending: number;
}

/** How a delivery ended. */
export type Outcome = 'delivered' | 'failed';

/**
 * One receiver's answer within one attempt, as a delivery's record keeps it: `status` when it
 * answered, `error` when it did not, or answered other than 2xx (then both).
 */
export interface AttemptRecord {
  /** When the request started, in ms since the epoch. */
  at: number;
  /** The attempt, from 1. */
  attempt: number;
  /** The receiver's URL without credentials or query (what the page and the logs show). */
  url: string;
  status?: number;
  error?: string;
  durationMs: number;
}

/** Where a delivery stands: waiting for an attempt, or settled. */
export type DeliveryState = 'pending' | Outcome;

/** A delivery as the store holds it: the message and body it sends, where it stands, and every attempt made. */
export interface DeliveryRecord {
  delivery: Delivery;
  state: DeliveryState;
  /** When it settled, in ms since the epoch; absent while pending. */
  settledAt?: number;
  /** Oldest first. */
  attempts: AttemptRecord[];
}

/**
 * A delivery one process holds, to make its next attempt: no other process is handed it while
 * the lease runs. A claim that is neither renewed nor settled lapses, and the delivery is handed
 * out again; the lapsed claim's `settle` and `retry` are then refused.
 */
export interface Claimed {
  delivery: Delivery;
  /** The claim's id: every call about this attempt names it. */
  claim: string;
  /** The attempt this claim makes, from 1. */
  attempt: number;
  /** The webhooks still worth asking (positions in the source's `webhooks`); absent: all. */
  targets?: number[];
  /**
   * This store accepted the delivery since it was opened, so whoever watches its acceptances was
   * told of it then. False for one it found on opening (accepted before a restart), or that
   * another process sharing the store accepted.
   */
  acceptedHere: boolean;
}

/** A claim on `delivery`, with `targets` only when some are given (a stored null or undefined: all). */
export function claimOf(delivery: Delivery, claim: string, attempt: number, acceptedHere: boolean, targets: number[] | null | undefined): Claimed {
  const claimed: Claimed = { delivery, claim, attempt, acceptedHere };
  if (targets !== undefined && targets !== null) claimed.targets = targets;
  return claimed;
}

/** How `accept` claims what it records for the caller, who then delivers it at once. */
export interface ClaimOptions {
  /** How many of the deliveries (the first ones) to claim; the rest wait for `claim()`. */
  claim: number;
  /** How long the claims last before they lapse, in ms. */
  lease: number;
}

/**
 * A message the ingestion routes took: the `messageId` it claims in its source for the
 * de-duplication window, and its delivery when it is forwarded (a message forwarded nowhere claims
 * its id all the same, so that its repeats are known too).
 */
export interface Arrival {
  source: string;
  messageId: string;
  delivery?: Delivery;
}

/** What {@link Store.ingest} resolves with. */
export interface Ingested {
  /** The claims taken on the first `options.claim` deliveries recorded (repeats are not). */
  claimed: Claimed[];
  /**
   * Per arrival, in order: when its `messageId` was first accepted in its source (ms since the
   * epoch) when it is a repeat within the window, else undefined (it was recorded).
   */
  repeats: (number | undefined)[];
}

/** What an audience sync records: its identify calls and the membership the next sync starts from. */
export interface AudiencePlan {
  deliveries: Delivery[];
  state: AudienceState;
}

/**
 * Where the collector keeps what must survive a crash: deliveries not yet settled, with when and to
 * which webhooks their next attempt goes, and the latest state of each audience. Deliveries are
 * handed out as claims with a lease, so that several processes can share one store (PostgreSQL)
 * and none attempts a delivery another holds. Two implementations: the file journal (the default,
 * one process) and PostgreSQL; both pass one contract suite (test/collector/store-contract.ts).
 */
export interface Store extends UrlStates {
  /**
   * Connects or recovers what the previous run left; called before any other method, and again
   * only after it rejected with a `StoreConnectError` (the database was not reachable yet).
   */
  open(): Promise<StoreSnapshot>;
  /**
   * Resolves when the store answers now (`/readyz` asks); rejects with why it does not. Absent: a
   * store that is open always answers.
   */
  ping?(): Promise<void>;
  /**
   * Records deliveries, all or nothing, and resolves only once they are durable: the collector
   * answers 200 after this, never before. They are due at once.
   * @returns the claims taken on the first `options.claim` of them (none without options).
   */
  accept(deliveries: readonly Delivery[], options?: ClaimOptions): Promise<Claimed[]>;
  /**
   * Records what the ingestion routes took, de-duplicated per source on `messageId`: in the same
   * acceptance, each arrival claims its source and `messageId` for the store's de-duplication
   * window (a repeat within it, by any process sharing the store, an earlier call or an earlier
   * arrival of the same call, is not recorded). Resolves only once what it recorded and the ids it
   * claimed are durable; a repeat resolves only once its first acceptance did. With a window of 0,
   * nothing is a repeat and no id is remembered.
   * @returns the claims taken on the first `options.claim` deliveries recorded, and which arrivals were repeats.
   */
  ingest(arrivals: readonly Arrival[], options?: ClaimOptions): Promise<Ingested>;
  /**
   * Runs an audience sync as one transaction, serialised with every other sync of the same
   * audience (in any process): `plan` gets the state the previous sync left (absent before the
   * first) and returns the identify calls and the new state, which are recorded together.
   * @throws what `plan` throws: then nothing is recorded.
   */
  syncAudience<P extends AudiencePlan>(
    source: string,
    name: string,
    plan: (previous: AudienceState | undefined) => P,
    options?: ClaimOptions,
  ): Promise<{ plan: P; claimed: Claimed[] }>;
  /** Claims up to `limit` due deliveries, oldest due first, for `lease` ms. */
  claim(limit: number, lease: number): Promise<Claimed[]>;
  /** Extends the leases of claims still held. @returns the claims that had lapsed and were lost. */
  renew(held: readonly Claimed[], lease: number): Promise<Claimed[]>;
  /**
   * Gives a claim up for a later attempt: the delivery is due again in `delay` ms, to `targets`.
   * `attempts`: what each receiver answered in the attempt, added to the delivery's record.
   * `waitingFor`: those of `targets` it waits for only because their URL backs off or is disabled,
   * which `hasten` may pull it forward for; the others keep its delay.
   * @returns false when the claim had been lost (nothing changed).
   */
  retry(held: Claimed, delay: number, targets: readonly number[], attempts?: readonly AttemptRecord[], waitingFor?: readonly number[]): Promise<boolean>;
  /**
   * Settles a claimed delivery so it is never handed out again; its record (with `attempts` added)
   * is kept for the store's retention. A settlement lost in a crash only causes a repeat.
   * @returns false when the claim had been lost (nothing changed).
   */
  settle(held: Claimed, outcome: Outcome, attempts?: readonly AttemptRecord[]): Promise<boolean>;
  /**
   * The deliveries of a `messageId` the store holds (pending, or settled within its retention), in
   * the order they were accepted, with their attempts: a message sent to two sources, or sent again,
   * has several. Empty when it holds none.
   */
  lookup(messageId: string): Promise<DeliveryRecord[]>;
  /** The delivery `id`, pending or settled within the store's retention; undefined when it holds none. */
  find(id: string): Promise<DeliveryRecord | undefined>;
  /**
   * Sends again, once, the deliveries `query` names (given up, settled as failed, within the
   * window, and still held): `redeliver` turns each into its new delivery, or undefined to leave
   * it. The new ones are recorded, all or nothing, and the originals marked as recovered in the
   * same acceptance, so that no later or concurrent recover, in this process or another, sends
   * one of them again. Resolves once they are durable.
   */
  recover(query: RecoverQuery, redeliver: (record: DeliveryRecord) => Delivery | undefined, options?: ClaimOptions): Promise<Recovered>;
  /**
   * Makes the unclaimed retries of `source` waiting for webhook index `target` (their `waitingFor`)
   * due now: the URL answers again, or was enabled, so they need not wait out their delays. A retry
   * whose own request that URL turned down keeps its backoff. Other processes sharing the store are
   * told there is work.
   * @returns how many.
   */
  hasten(source: string, target: number): Promise<number>;
  /** Gives claims back unattempted, due at once, for another process or the next start. */
  release(held: readonly Claimed[]): Promise<void>;
  /** Calls `listener` when another process may have left work due; @returns a function that stops it. */
  onWork(listener: () => void): () => void;
  /**
   * The database, when the store is one that several processes share: the live page keeps its
   * events there too, so that each process's page shows them all. Called after `open()`. Absent:
   * the page keeps a history of its own.
   */
  database?(): StoreDatabase;
  /**
   * What waits undelivered, for monitoring (the collector's `/metrics`): deliveries pending (by
   * every process sharing the store) and when the oldest of them was accepted (its `receivedAt`,
   * ms since the epoch; absent when none is pending). Absent: the store cannot say.
   */
  backlog?(): Promise<Backlog>;
  /** Writes what is buffered and releases the store; later calls reject. Idempotent. */
  close(): Promise<void>;
}

/** What reads delivery records: the routes that look a message up and send a delivery again. */
export type DeliveryRecords = Pick<Store, 'lookup' | 'find'>;

/** What {@link Store.database} gives: the store's connections, for the page's shared history. */
export interface StoreDatabase {
  /** The store's pool, while it is open. */
  pool(): Pool;
  /** A new connection of its own, for `LISTEN`. */
  connect(): Client;
  /** This process, as the rows it writes name it. */
  writer: string;
  /** A database failure in words, for reports. */
  describe(error: unknown): string;
}

/** Which deliveries {@link Store.recover} sends again: those of `source` given up within [`since`, `until`) ms since the epoch. */
export interface RecoverQuery {
  source: string;
  since: number;
  until: number;
}

/** What {@link Store.recover} resolves with. */
export interface Recovered {
  /** The claims taken on the first `options.claim` new deliveries. */
  claimed: Claimed[];
  /** The new deliveries recorded. */
  recorded: Delivery[];
}

/** What {@link Store.backlog} resolves with. */
export interface Backlog {
  pending: number;
  oldestAt?: number;
}

/**
 * The store cannot record anything now: its disk is full or failing, or its database does not
 * answer in time. Nothing of the call was recorded. The collector answers 503 with `Retry-After`,
 * so clients back off and send again; it clears by itself once the store recovers.
 */
export class StoreUnavailableError extends AnalyticsError {
  /** When a client should try again, in seconds. */
  readonly retryAfter: number;

  constructor(message: string, options: { cause?: unknown; retryAfter?: number } = {}) {
    super(message, { code: 'ERR_STORE_UNAVAILABLE', cause: options.cause });
    this.retryAfter = options.retryAfter ?? STORE_RETRY_AFTER;
  }
}

/** The `Retry-After` (seconds) of a {@link StoreUnavailableError} when the store names none. */
export const STORE_RETRY_AFTER = 5;
