import { DueQueue } from '../due-queue.js';
import type { Schedule } from './format.js';
import type { Segment } from './segment.js';
import { type AudienceRecord, type Backlog, type Claimed, claimOf, type Delivery } from '../store.js';
import { sourceKey } from '../source-key.js';

/**
 * A delivery not yet settled: where its bytes lie in the journal, and its schedule. The delivery
 * itself is read back when it is claimed, so a backlog costs memory for this only. Changed by its
 * {@link PendingIndex} only.
 */
export interface Entry {
  id: string;
  /** Kept (interned) for what picks deliveries by source without reading them. */
  source: string;
  segment: Segment;
  offset: number;
  length: number;
  /** Acceptance order: claims among deliveries due at once go oldest first. */
  order: number;
  /** When it was accepted (its webhook's `receivedAt`): how old the backlog is. */
  receivedAt: number;
  /** Attempts started. */
  attempts: number;
  /** The webhooks still to ask (after a retry); absent: all. */
  targets?: number[];
  /** Those of `targets` it waits for only because their URL backs off or is disabled: `hasten` pulls it forward for them. */
  waitingFor?: number[];
  /** When it may be claimed (ms since the epoch): at once, at its retry, or when its claim lapses. */
  due: number;
  claim?: string;
}

/** An audience's latest state and the line that holds it. */
export interface KeptAudience {
  record: AudienceRecord;
  segment: Segment;
  length: number;
}

/** Stale queue entries tolerated beyond twice the pending count before the due queue is rebuilt. */
const STALE_SLACK = 4_096;

/**
 * What the journal holds pending, in memory: each delivery not yet settled (where it lies and its
 * schedule, with a {@link DueQueue} of when each may be claimed) and each audience's latest state.
 * Every record it keeps counts in the segment that holds it ({@link Segment.keep}) until it is
 * settled, replaced or copied elsewhere: what a segment still holds is known from these counts.
 */
export class PendingIndex {
  readonly #pending = new Map<string, Entry>();
  /**
   * Pending deliveries' ids by when they may be claimed. An id is queued again whenever its time
   * changes, and a stale queuing is skipped when taken; ids, not entries, so that what was settled
   * is not kept alive by them.
   */
  readonly #due = new DueQueue<string>();
  /** The next acceptance order. */
  #accepted = 0;
  /** The first acceptance order of the store's run: what came before was found on opening. */
  #runStart = Number.POSITIVE_INFINITY;
  readonly #audiences = new Map<string, KeptAudience>();
  /** One string per source name, shared by its entries. */
  readonly #sources = new Map<string, string>();

  /** How many deliveries are pending. */
  get size(): number {
    return this.#pending.size;
  }

  /** How many audiences have a state. */
  get audiences(): number {
    return this.#audiences.size;
  }

  /** The next acceptance order. */
  get nextOrder(): number {
    return this.#accepted;
  }

  /** Takes the next `count` acceptance orders. @returns the first. */
  order(count: number): number {
    const order = this.#accepted;
    this.#accepted += count;
    return order;
  }

  /** What the journal held is all entered: acceptances from now on are the run's own. */
  opened(): void {
    this.#runStart = this.#accepted;
  }

  /** Orders before `end` were taken by a journaled acceptance (as replayed). */
  ordered(end: number): void {
    this.#accepted = Math.max(this.#accepted, end);
  }

  get(id: string): Entry | undefined {
    return this.#pending.get(id);
  }

  /** The latest state recorded for an audience (see {@link sourceKey}). */
  audience(key: string): AudienceRecord | undefined {
    return this.#audiences.get(key)?.record;
  }

  /** The pending deliveries whose record lies in `segment`. */
  *entriesIn(segment: Segment): Generator<Entry> {
    for (const entry of this.#pending.values()) if (entry.segment === segment) yield entry;
  }

  /** The audiences whose latest state lies in `segment`. */
  *audiencesIn(segment: Segment): Generator<KeptAudience> {
    for (const kept of this.#audiences.values()) if (kept.segment === segment) yield kept;
  }

  /** Makes a delivery pending, at the place its bytes were journaled. */
  enter(delivery: Pick<Delivery, 'id' | 'source' | 'webhook' | 'targets'>, segment: Segment, offset: number, length: number, order: number, schedule?: Partial<Schedule>): Entry {
    const previous = this.#pending.get(delivery.id);
    // A copy made forward: it replaces the older one.
    if (previous !== undefined) this.forget(previous);
    let source = this.#sources.get(delivery.source);
    if (source === undefined) this.#sources.set(delivery.source, (source = delivery.source));
    // Every field set here, so that all entries share one shape.
    const entry: Entry = { id: delivery.id, source, segment, offset, length, order, receivedAt: delivery.webhook.receivedAt, attempts: schedule?.attempts ?? 0, targets: schedule?.targets ?? delivery.targets, waitingFor: schedule?.waitingFor, due: 0, claim: undefined };
    segment.keep(length);
    this.#pending.set(entry.id, entry);
    this.#schedule(entry, schedule?.at ?? 0);
    return entry;
  }

  forget(entry: Entry): void {
    this.#pending.delete(entry.id);
    entry.segment.release(entry.length);
  }

  /** A copy of `entry` was written at `offset` in `segment`; unless it was settled meanwhile, the copy is the one that counts. */
  move(entry: Entry, segment: Segment, offset: number): void {
    // Settled while it was written: the settlement comes after the copy in the journal too.
    if (this.#pending.get(entry.id) !== entry) return;
    entry.segment.release(entry.length);
    entry.segment = segment;
    entry.offset = offset;
    segment.keep(entry.length);
  }

  keepAudience(record: AudienceRecord, segment: Segment, length: number): void {
    const key = sourceKey(record.source, record.state.audience);
    const previous = this.#audiences.get(key);
    if (previous !== undefined) {
      previous.segment.release(previous.length);
    }
    this.#audiences.set(key, { record, segment, length });
    segment.keep(length);
  }

  /** A copy of `kept` was written to `segment`: it counts unless a newer state came meanwhile. */
  moveAudience(kept: KeptAudience, segment: Segment, length: number): void {
    if (this.#audiences.get(sourceKey(kept.record.source, kept.record.state.audience)) === kept) this.keepAudience(kept.record, segment, length);
  }

  /** Claims up to `limit` deliveries due at `now`, held until `until`. */
  claimDue(now: number, limit: number, claim: string, until: number): Entry[] {
    const taken: Entry[] = [];
    while (taken.length < limit) {
      const next = this.#due.takeDue(now);
      if (next === undefined) break;
      const entry = this.#pending.get(next.item);
      // Only the latest queuing of a pending delivery counts.
      if (entry === undefined || next.due !== entry.due) continue;
      entry.claim = claim;
      entry.attempts += 1;
      this.#schedule(entry, until);
      taken.push(entry);
    }
    return taken;
  }

  /** Gives back what a claim took whose deliveries could not be read, as they were: a later claim tries again. */
  giveBack(taken: readonly Entry[], claim: string, now: number): void {
    for (const entry of taken) if (entry.claim === claim) this.#untake(entry, now);
  }

  /** Holds the claims still held until `until`. @returns those lost. */
  renew(held: readonly Claimed[], until: number): Claimed[] {
    const lost: Claimed[] = [];
    for (const claimed of held) {
      const entry = this.#held(claimed);
      if (entry === undefined) lost.push(claimed);
      else this.#schedule(entry, until);
    }
    return lost;
  }

  /** A held delivery waits until `at` for `targets`. @returns it; undefined when its claim was lost. */
  retry(held: Claimed, at: number, targets: readonly number[], waitingFor: readonly number[]): Entry | undefined {
    const entry = this.#held(held);
    if (entry === undefined) return undefined;
    entry.claim = undefined;
    entry.targets = [...targets];
    entry.waitingFor = waitingFor.length === 0 ? undefined : [...waitingFor];
    this.#schedule(entry, at);
    return entry;
  }

  /** A held delivery is settled. @returns it; undefined when its claim was lost. */
  settle(held: Claimed): Entry | undefined {
    const entry = this.#held(held);
    if (entry !== undefined) this.forget(entry);
    return entry;
  }

  /** Gives held deliveries back untried, due at `now`. */
  release(held: readonly Claimed[], now: number): void {
    for (const claimed of held) {
      const entry = this.#held(claimed);
      if (entry !== undefined) this.#untake(entry, now);
    }
  }

  /** Undoes a claim's take: the attempt it counted was never made. */
  #untake(entry: Entry, now: number): void {
    entry.claim = undefined;
    entry.attempts -= 1;
    this.#schedule(entry, now);
  }

  /** A retry as replayed: its attempts, targets and time. */
  reschedule(entry: Entry, { at, attempts, targets, waitingFor }: Schedule): void {
    entry.attempts = attempts;
    entry.targets = targets;
    entry.waitingFor = waitingFor;
    this.#schedule(entry, at);
  }

  take(entry: Entry, claim: string, until: number, delivery: Delivery): Claimed {
    entry.claim = claim;
    entry.attempts += 1;
    this.#schedule(entry, until);
    return this.claimed(entry, delivery);
  }

  claimed(entry: Entry, delivery: Delivery): Claimed {
    return claimOf(delivery, entry.claim!, entry.attempts, entry.order >= this.#runStart, entry.targets);
  }

  /** The entry a claim still holds; undefined once it was settled, retried or taken over. */
  #held(claimed: Claimed): Entry | undefined {
    const entry = this.#pending.get(claimed.delivery.id);
    return entry?.claim === claimed.claim ? entry : undefined;
  }

  #schedule(entry: Entry, due: number): void {
    entry.due = due;
    this.#due.add(entry.id, due, entry.order);
    // Every claim queues its lease's end; settled deliveries leave those behind. Rebuilt once they
    // outnumber what is pending, the queue stays within a small multiple of the backlog.
    if (this.#due.size > 2 * this.#pending.size + STALE_SLACK) {
      this.#due.reset([...this.#pending.values()].map(({ id, due: at, order }) => ({ item: id, due: at, order })));
    }
  }

  /** Makes the retries of `source` waiting for `target` due at `now`. @returns how many. */
  hasten(source: string, target: number, now: number): number {
    let hastened = 0;
    for (const entry of this.#pending.values()) {
      if (entry.claim !== undefined || entry.due <= now || entry.source !== source) continue;
      if (entry.waitingFor?.includes(target) !== true) continue;
      this.#schedule(entry, now);
      hastened += 1;
    }
    return hastened;
  }

  backlog(): Backlog {
    // A scan, not the map's first entry: copying forward puts old deliveries after newer ones in
    // the segments a restart replays.
    let oldestAt: number | undefined;
    for (const { receivedAt } of this.#pending.values()) if (oldestAt === undefined || receivedAt < oldestAt) oldestAt = receivedAt;
    return { pending: this.#pending.size, oldestAt };
  }
}
