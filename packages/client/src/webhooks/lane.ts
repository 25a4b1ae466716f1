import type { DeliveryError } from '../core/errors.js';
import { OldestFirst } from '../core/oldest-first.js';
import { Queue } from '../core/queue.js';

/** How one request to a URL ended, as far as the URL's health is concerned. */
export type RequestOutcome = 'ok' | 'failed' | 'neutral';

/** Limits of a {@link UrlLane}. Durations in ms. */
export interface LaneLimits {
  /** Requests in progress to the URL at once. */
  maxInProgress: number;
  /** Deliveries whose requests failed (timeouts, network errors, 3xx, 5xx, 408, 429) in a row that open the breaker. */
  breakerThreshold: number;
  /** The first time the breaker stays open; it doubles each time a probe fails. */
  minCooldown: number;
  /** The longest time the breaker stays open. */
  maxCooldown: number;
}

/** A delivery waiting for a free slot on any of several lanes; the first lane to free one wins. */
export interface SlotWaiter {
  /** Set by {@link finish}. */
  done: boolean;
  /** Called with the lane that handed over a slot, or `undefined` when the caller should look again. */
  wake: (lane: UrlLane | undefined) => void;
}

const NOTHING: SlotWaiter['wake'] = () => undefined;

/**
 * Marks a waiter done: woken, or served by another lane. Its `wake` is let go of too: a lane keeps
 * a done waiter until its next sweep (see {@link UrlLane.wait}), which a URL that does not answer
 * makes only when its queue has doubled, and `wake` holds the attempt's state, body included.
 */
export function finish(waiter: SlotWaiter): void {
  waiter.done = true;
  waiter.wake = NOTHING;
}

/**
 * How many of the deliveries whose requests failed while the breaker was open it keeps from
 * carrying its probes; beyond that the oldest may carry one again, so that a URL down for days
 * costs bounded memory.
 */
const FAILED_KEPT = 1_000;

/** Waiters a lane queues before it first drops those another lane served (see {@link UrlLane.wait}). */
const SWEEP_FLOOR = 1_024;

/**
 * One URL's share of a destination: how many requests are in progress to it (at most
 * `maxInProgress`; deliveries that find it full go to the destination's other URLs or wait), and
 * a circuit breaker. Once the requests of `breakerThreshold` different deliveries failed in a row
 * the breaker opens (one message retried many times does not open it alone): the URL gets no
 * request for a cooldown (`minCooldown`, doubling up to `maxCooldown`), then one probe; any
 * answer (a 4xx too: the URL is up), to the probe or to a request still in progress, closes it, a
 * failed probe reopens it for twice as long, and a request that says nothing about the URL
 * (closed, certificate) lets the next one probe.
 *
 * The probe is fair: the first delivery the open breaker refuses is told to come back when the
 * probe is due (`nextTry`), the others back off on their own schedule, and a delivery whose own
 * request failed since the breaker opened is never the one told, so a message the receiver can
 * never take does not keep the URL closed to the messages it would take.
 * Nothing here runs a timer: the state is read against the clock when a delivery asks.
 */
export class UrlLane {
  readonly index: number;
  readonly #limits: LaneLimits;
  #inProgress = 0;
  /** Deliveries whose latest requests failed since the last success, while the breaker is closed. */
  readonly #failing = new Set<string>();
  /** When the open breaker lets a probe through; 0 while closed. */
  #openUntil = 0;
  /** Times the breaker opened since it was last closed: sets the cooldown. */
  #opened = 0;
  /** The delivery whose probe is in progress. */
  #prober: string | undefined;
  /** The delivery told to come back for the next probe. */
  #carrier: string | undefined;
  /** Deliveries whose requests failed since the breaker opened, oldest first. */
  readonly #failed = new Set<string>();
  readonly #failedOldest = new OldestFirst(this.#failed);
  /** The failure that opened (or kept open) the breaker. */
  #lastFailure: DeliveryError | undefined;
  /** A FIFO, not an array: a backlog of thousands of deliveries waits here, and `Array#shift` is O(n). */
  readonly #waiters = new Queue<SlotWaiter>();
  /** The queue's length at which the waiters another lane served are dropped. */
  #sweepAt = SWEEP_FLOOR;

  constructor(index: number, limits: LaneLimits) {
    this.index = index;
    this.#limits = limits;
  }

  /** Whether the breaker lets requests through now (closed, or ready for its probe). */
  admits(now: number): boolean {
    if (this.#openUntil === 0) return true;
    return now >= this.#openUntil && this.#prober === undefined;
  }

  /** Whether the breaker is closed: a full lane will free a slot for whoever waits. */
  get closed(): boolean {
    return this.#openUntil === 0;
  }

  /** Wait until the breaker lets a probe through, in ms; 0 when it admits requests now. */
  reopensIn(now: number): number {
    return this.#openUntil === 0 ? 0 : Math.max(0, this.#openUntil - now);
  }

  /** Whether delivery `id`'s request in progress is the open breaker's probe. */
  probing(id: string): boolean {
    return this.#prober === id;
  }

  /** The failure that opened the breaker; absent while closed. */
  get lastFailure(): DeliveryError | undefined {
    return this.#openUntil === 0 ? undefined : this.#lastFailure;
  }

  /** Takes a slot for delivery `id` if the breaker admits a request and one is free. */
  tryAcquire(now: number, id: string): boolean {
    if (!this.admits(now) || this.#inProgress >= this.#limits.maxInProgress) return false;
    if (this.#openUntil !== 0) this.#prober = id;
    this.#inProgress += 1;
    return true;
  }

  /**
   * When delivery `id`, just refused by the open breaker, should come back, in ms: when the probe
   * is due, if it is the first refused since the breaker (re)opened and none of its requests failed
   * since; else undefined, and it backs off on its own schedule.
   */
  nextTry(now: number, id: string): number | undefined {
    if (this.#openUntil <= now || (this.#carrier !== undefined && this.#carrier !== id) || this.#failed.has(id)) return undefined;
    this.#carrier = id;
    return this.#openUntil - now;
  }

  /**
   * Queues a waiter for the next slot this lane frees while its breaker is closed. A waiter
   * another lane served stays queued until this one frees a slot, which a URL that does not answer
   * does only at its timeout: meanwhile every delivery that went elsewhere would wait here, with
   * its attempt's state (20,000 a second on a busy collector). So once the queue has doubled since
   * the last look, those are dropped: it holds at most about twice the live waiters.
   */
  wait(waiter: SlotWaiter): void {
    this.#waiters.push(waiter);
    if (this.#waiters.length < this.#sweepAt) return;
    const live = this.#waiters.drain().filter((queued) => !queued.done);
    for (const queued of live) this.#waiters.push(queued);
    this.#sweepAt = Math.max(SWEEP_FLOOR, 2 * live.length);
  }

  /** Waiters queued, some of them perhaps served by another lane since (see {@link wait}). */
  get waiting(): number {
    return this.#waiters.length;
  }

  /**
   * Gives the slot of delivery `id` back, with what its request said about the URL's health.
   * @returns whether this closed the open breaker: the URL answers again.
   */
  release(outcome: RequestOutcome, now: number, id: string, error?: DeliveryError): boolean {
    this.#inProgress -= 1;
    const probe = this.#prober === id;
    if (probe) this.#prober = undefined;
    const wasOpen = this.#openUntil !== 0;
    if (outcome === 'ok') this.#close();
    else if (outcome === 'failed') {
      this.#lastFailure = error;
      if (wasOpen) {
        this.#remember(id);
        if (probe) this.#open(now);
      } else {
        this.#failing.add(id);
        if (this.#failing.size >= this.#limits.breakerThreshold) this.#open(now);
      }
    }
    this.#handOver();
    return wasOpen && this.#openUntil === 0;
  }

  #close(): void {
    this.#failing.clear();
    this.#failed.clear();
    this.#openUntil = 0;
    this.#opened = 0;
    this.#prober = undefined;
    this.#carrier = undefined;
  }

  #open(now: number): void {
    for (const id of this.#failing) this.#remember(id);
    this.#failing.clear();
    this.#carrier = undefined;
    this.#opened += 1;
    const { minCooldown, maxCooldown } = this.#limits;
    this.#openUntil = now + Math.min(maxCooldown, minCooldown * 2 ** (this.#opened - 1));
    // Whoever waits for this URL alone would wait for the whole cooldown: let them look again.
    this.wakeAll();
  }

  /** Keeps `id` from carrying a probe while the breaker stays open. */
  #remember(id: string): void {
    this.#failed.delete(id);
    this.#failed.add(id);
    this.#failedOldest.trim(FAILED_KEPT);
  }

  /** Wakes every waiter to look again (the breaker opened, or the destination is closing). */
  wakeAll(): void {
    for (const waiter of this.#waiters.drain()) {
      if (!waiter.done) waiter.wake(undefined);
    }
  }

  /** Hands the freed slot straight to the first live waiter, so no newcomer overtakes it. */
  #handOver(): void {
    while (this.#openUntil === 0 && this.#inProgress < this.#limits.maxInProgress && this.#waiters.length > 0) {
      const waiter = this.#waiters.shift()!;
      if (waiter.done) continue;
      this.#inProgress += 1;
      waiter.wake(this);
    }
  }
}
