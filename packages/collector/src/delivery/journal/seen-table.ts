import type { MessageKey } from './message-key.js';

/** The fewest slots a table has. */
const MIN_SLOTS = 1_024;
/** Slots in use (live, expired or freed) beyond this share of the table make it rebuilt. */
const MAX_LOAD = 0.75;
/** A rebuilt table has at least this many slots per live id (so it is at most half full). */
const ROOM = 2;
/** `at` of a slot never used: probing stops there. */
const EMPTY = 0;
/** `at` of a slot whose claim was taken back: probing goes on past it. */
const FREED = -1;

/** Bytes a slot takes: the key's two 32-bit halves and a 64-bit time. */
export const SLOT_BYTES = 16;

/**
 * The ids a journal remembers, with when each was accepted: open addressing with linear probing
 * over three typed arrays (no object per id), 16 bytes a slot. Ids older than the window count as
 * absent and their slots are reused; the table is rebuilt with only the live ids once three
 * quarters of its slots are used, at twice their number (rounded up to a power of two). So
 * 1,000,000 live ids take 2^21 slots, 32 MiB, and a rebuild holds both tables for a moment: at
 * most 48 MiB on the way there.
 */
export class SeenTable {
  #hi: Uint32Array;
  #lo: Uint32Array;
  #at: Float64Array;
  /** Slots not EMPTY. */
  #used = 0;

  constructor(slots = MIN_SLOTS) {
    this.#hi = new Uint32Array(slots);
    this.#lo = new Uint32Array(slots);
    this.#at = new Float64Array(slots);
  }

  /** Bytes the table's arrays take. */
  get bytes(): number {
    return this.#at.length * SLOT_BYTES;
  }

  /**
   * Records `key` as accepted at `at`, unless it was accepted at or after `since`.
   * @returns when it was accepted when it was (a repeat); undefined when it is recorded now.
   */
  claim(key: MessageKey, at: number, since: number): number | undefined {
    const found = this.#find(key, since);
    if (found >= 0) {
      const first = this.#at[found]!;
      if (first >= since) return first;
      this.#at[found] = at;
      return undefined;
    }
    this.#put(key, at, ~found, since);
    return undefined;
  }

  /** Takes back a claim made at `at` that was not recorded after all. */
  forget(key: MessageKey, at: number): void {
    const found = this.#find(key, Number.NEGATIVE_INFINITY);
    if (found >= 0 && this.#at[found] === at) this.#at[found] = FREED;
  }

  /**
   * The slot of `key`, or `~slot` of where it would go: the first slot on its path that is free,
   * freed, or holds an id older than `since`.
   */
  #find(key: MessageKey, since: number): number {
    const mask = this.#at.length - 1;
    let reusable = -1;
    for (let slot = key.lo & mask; ; slot = (slot + 1) & mask) {
      const at = this.#at[slot]!;
      if (at === EMPTY) return ~(reusable >= 0 ? reusable : slot);
      if (at !== FREED && this.#hi[slot] === key.hi && this.#lo[slot] === key.lo) return slot;
      if (reusable < 0 && at < since) reusable = slot;
    }
  }

  #put(key: MessageKey, at: number, slot: number, since: number): void {
    if (this.#at[slot] === EMPTY) {
      if (this.#used + 1 > this.#at.length * MAX_LOAD) {
        this.#rebuild(since);
        this.#put(key, at, ~this.#find(key, since), since);
        return;
      }
      this.#used += 1;
    }
    this.#hi[slot] = key.hi;
    this.#lo[slot] = key.lo;
    this.#at[slot] = at;
  }

  /** Moves the ids accepted at or after `since` into a table of twice their number of slots. */
  #rebuild(since: number): void {
    const [hi, lo, times] = [this.#hi, this.#lo, this.#at];
    let live = 0;
    for (const at of times) if (isLive(at, since)) live += 1;
    let slots = MIN_SLOTS;
    while (slots < (live + 1) * ROOM) slots *= 2;
    this.#hi = new Uint32Array(slots);
    this.#lo = new Uint32Array(slots);
    this.#at = new Float64Array(slots);
    this.#used = 0;
    const key: MessageKey = { hi: 0, lo: 0 };
    for (let slot = 0; slot < times.length; slot++) {
      if (!isLive(times[slot]!, since)) continue;
      key.hi = hi[slot]!;
      key.lo = lo[slot]!;
      const to = ~this.#find(key, since);
      this.#hi[to] = key.hi;
      this.#lo[to] = key.lo;
      this.#at[to] = times[slot]!;
      this.#used += 1;
    }
  }
}

/** Whether a slot's time is an id accepted at or after `since` (not a slot free or freed). */
function isLive(at: number, since: number): boolean {
  return at > 0 && at >= since;
}
