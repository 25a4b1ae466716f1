import type { DeliveryError } from '../core/errors.js';
import { Queue } from '../core/queue.js';

/** How one request to a URL ended, as far as the URL's health is concerned. */
export type RequestOutcome = 'ok' | 'failed' | 'neutral';

/** Limits of a {@link UrlLane}. Durations in ms. */
export interface LaneLimits {
  /** Requests in progress to the URL at once. */
  maxInProgress: number;
  /** Consecutive failures (timeouts, network errors, 5xx, 408, 429) that open the breaker. */
  breakerThreshold: number;
  /** The first time the breaker stays open; it doubles each time a probe fails. */
  minCooldown: number;
  /** The longest time the breaker stays open. */
  maxCooldown: number;
}

/** A delivery waiting for a free slot on any of several lanes; the first lane to free one wins. */
export interface SlotWaiter {
  done: boolean;
  /** Called with the lane that handed over a slot, or `undefined` when the caller should look again. */
  wake(lane: UrlLane | undefined): void;
}

/**
 * One URL's share of a destination: how many requests are in progress to it (at most
 * `maxInProgress`; deliveries that find it full go to the destination's other URLs or wait), and
 * a circuit breaker. After `breakerThreshold` consecutive failures the breaker opens: the URL gets
 * no request for a cooldown (`minCooldown`, doubling up to `maxCooldown`), then one probe; any
 * answer (a 4xx too: the URL is up) closes it, a failure reopens it for twice as long, and a
 * request that says nothing about the URL (closed, certificate) lets the next one probe.
 * Nothing here runs a timer: the state is read against the clock when a delivery asks.
 */
export class UrlLane {
  readonly index: number;
  readonly #limits: LaneLimits;
  #inProgress = 0;
  #failures = 0;
  /** When the open breaker lets a probe through; 0 while closed. */
  #openUntil = 0;
  /** Times the breaker opened since it was last closed: sets the cooldown. */
  #opened = 0;
  #probing = false;
  /** The failure that opened (or kept open) the breaker. */
  #lastFailure: DeliveryError | undefined;
  /** A FIFO, not an array: a backlog of thousands of deliveries waits here, and `Array#shift` is O(n). */
  readonly #waiters = new Queue<SlotWaiter>();

  constructor(index: number, limits: LaneLimits) {
    this.index = index;
    this.#limits = limits;
  }

  /** Whether the breaker lets requests through now (closed, or ready for its probe). */
  admits(now: number): boolean {
    if (this.#openUntil === 0) return true;
    return now >= this.#openUntil && !this.#probing;
  }

  /** Whether the breaker is closed: a full lane will free a slot for whoever waits. */
  get closed(): boolean {
    return this.#openUntil === 0;
  }

  /** Wait until the breaker lets a probe through, in ms; 0 when it admits requests now. */
  reopensIn(now: number): number {
    return this.#openUntil === 0 ? 0 : Math.max(0, this.#openUntil - now);
  }

  /** The failure that opened the breaker; absent while closed. */
  get lastFailure(): DeliveryError | undefined {
    return this.#openUntil === 0 ? undefined : this.#lastFailure;
  }

  /** Takes a slot if the breaker admits a request and one is free. */
  tryAcquire(now: number): boolean {
    if (!this.admits(now) || this.#inProgress >= this.#limits.maxInProgress) return false;
    if (this.#openUntil !== 0) this.#probing = true;
    this.#inProgress += 1;
    return true;
  }

  /** Queues a waiter for the next slot this lane frees while its breaker is closed. */
  wait(waiter: SlotWaiter): void {
    this.#waiters.push(waiter);
  }

  /** Gives a slot back, with what the request said about the URL's health. */
  release(outcome: RequestOutcome, now: number, error?: DeliveryError): void {
    this.#inProgress -= 1;
    if (outcome === 'ok') {
      this.#failures = 0;
      this.#openUntil = 0;
      this.#opened = 0;
    } else if (outcome === 'failed') {
      this.#failures += 1;
      this.#lastFailure = error;
      if (this.#probing || (this.#openUntil === 0 && this.#failures >= this.#limits.breakerThreshold)) this.#open(now);
    }
    this.#probing = false;
    this.#handOver();
  }

  #open(now: number): void {
    this.#opened += 1;
    const { minCooldown, maxCooldown } = this.#limits;
    this.#openUntil = now + Math.min(maxCooldown, minCooldown * 2 ** (this.#opened - 1));
    // Whoever waits for this URL alone would wait for the whole cooldown: let them look again.
    this.wakeAll();
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
