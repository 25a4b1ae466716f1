import { GroupCommit, messageOf } from 'batched-analytics/internal';
import { StoreClosedError } from '../errors.js';
import { StoreUnavailableError } from '../store.js';
import { isDiskFull } from '../disk.js';
import type { Reporter } from '../../config/report.js';
import type { Reserve } from './reserve.js';
import type { Segment } from './segment.js';
import type { Segments } from './segments.js';
import { DeferredRecords, type DeferrableRecord } from './deferred.js';
import { recordLine } from './format.js';

/** A record to append. */
export interface Queued {
  bytes: Buffer;
  /** Whether the caller waits for the data to reach the disk, not only the OS. */
  sync: boolean;
  /**
   * A retry or a settlement: when a write fails it is kept and written with a later one, and its
   * caller goes on (it is not fsync'ed anyway; a crash meanwhile only repeats a delivery).
   */
  deferrable?: DeferrableRecord;
  /** Called once written, with where: acceptances enter the live state only then. */
  written?: (segment: Segment, offset: number) => void;
}

/** A write of nothing: carries the settlements a failed write deferred when nothing else comes. */
const NOTHING: Queued = Object.freeze({ bytes: Buffer.alloc(0), sync: false });

/**
 * Bytes of deferred records written at once: what waited may be larger than the room there is, and
 * each write is all or nothing.
 */
const DEFERRED_PIECE = 64 * 1024;

/** How long after a failed write the settlements it held are written again, when nothing else comes. */
const DEFERRED_RETRY = 1_000;

/**
 * Appends records to the journal's head, grouped: everything queued while a write runs goes in
 * the next one, so concurrent acceptances share one fsync. A write that fails refuses its
 * acceptances and keeps its settlements and retries (in the reserve's room on a full disk, else in
 * memory) for the next write. After each group, `maintain` gives disk space back.
 */
export class JournalWriter {
  readonly #segments: Pick<Segments, 'head' | 'roll'>;
  readonly #reserve: Reserve;
  readonly #report: Reporter;
  readonly #maintain: () => Promise<void>;
  /** Each item's result is the error that refused it, if any. */
  readonly #commits = new GroupCommit<Queued, Error | undefined>((batch) => this.#commit(batch));
  /** Settlements and retries failed writes left, written before anything newer. */
  readonly #deferred = new DeferredRecords();
  #retryTimer: NodeJS.Timeout | undefined;
  /** The last write failed. */
  #failing = false;
  /** The last write found the disk full. */
  #full = false;
  /** What acceptances of the last failed write were refused with. */
  #refusal: Error | undefined;
  /** Acceptances were refused since they were last taken (said once they are taken again). */
  #refusing = false;
  #closing = false;

  constructor(segments: Pick<Segments, 'head' | 'roll'>, reserve: Reserve, report: Reporter, maintain: () => Promise<void>) {
    this.#segments = segments;
    this.#reserve = reserve;
    this.#report = report;
    this.#maintain = maintain;
  }

  /** The last write found the disk full. */
  get full(): boolean {
    return this.#full;
  }

  /** Settlements and retries a failed write left wait in memory for the next. */
  get deferring(): boolean {
    return !this.#deferred.empty;
  }

  /** What acceptances of the last failed write were refused with. */
  get refusal(): Error | undefined {
    return this.#refusal;
  }

  async append(bytes: Buffer, options: Pick<Queued, 'sync' | 'written'>): Promise<void> {
    if (this.#closing) throw new StoreClosedError();
    const refused = await this.#commits.add({ bytes, ...options });
    if (refused !== undefined) throw refused;
  }

  /** Appends a retry or a settlement, without fsync; kept for a later write when this one fails. */
  async appendDeferrable(record: DeferrableRecord): Promise<void> {
    if (this.#closing) throw new StoreClosedError();
    await this.#commits.add({ bytes: recordLine(record), sync: false, deferrable: record });
  }

  /** Waits for the writes under way, and gives deferred settlements a last chance. */
  async close(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#retryTimer);
    await this.#commits.idle();
    // Settlements a full disk held back get a last chance.
    if (!this.#deferred.empty) await this.#commits.add(NOTHING);
  }

  /**
   * One group: what failed writes deferred first, then the group; then space is given back.
   * Acceptances wait while the reserve is spent (the room it needs may be all there is), or while
   * deferred records are still waiting for room.
   */
  async #commit(batch: Queued[]): Promise<(Error | undefined)[]> {
    const reserved = await this.#reserve.setAside();
    const caughtUp = await this.#writeDeferred();
    const items = batch.filter((item) => item.bytes.length > 0);
    const deferrable = items.filter((item) => item.deferrable !== undefined);
    // Behind what still waits, so that a delivery's records reach the journal in their order.
    if (!caughtUp) for (const item of deferrable) this.#deferred.add(item.deferrable!);
    const held = new Set(reserved && caughtUp ? undefined : items.filter((item) => item.deferrable === undefined));
    const written = !caughtUp ? [] : held.size === 0 ? items : deferrable;
    const refused = written.length > 0 ? await this.write(written) : new Set<Queued>();
    if (!this.#closing) await this.#maintain().catch((error: unknown) => this.#report.warn('collector: journal compaction failed: %s', messageOf(error)));
    const waiting = held.size === 0 ? undefined : caughtUp ? new StoreUnavailableError('the disk is full: the room set aside for settlements is in use until it can be set aside again') : this.#refusal;
    const taking = reserved && caughtUp && !this.#failing;
    if (this.#refusing && taking) this.#report.warn('collector: acceptances resume: the journal can take them again');
    this.#refusing = !taking;
    return batch.map((item) => (held.has(item) ? waiting : refused.has(item) ? this.#refusal : undefined));
  }

  /**
   * Writes what failed writes deferred, oldest first, a piece at a time, so that room for part of
   * it is used. @returns whether all of it is written.
   */
  async #writeDeferred(): Promise<boolean> {
    while (!this.#deferred.empty) {
      const piece = this.#deferred.take(DEFERRED_PIECE).map(({ record, line }): Queued => ({ bytes: line, sync: false, deferrable: record }));
      // One that fails is deferred again by write(); one written into the reserve's room leaves
      // the disk as full as it found it.
      await this.write(piece);
      if (this.#failing) return false;
    }
    const dropped = this.#deferred.takeDropped();
    if (dropped > 0) this.#report.warn('collector: the disk was full: the records of %d attempts were not kept (deliveries and their outcomes were)', dropped);
    return true;
  }

  /** Appends a batch to the head; when that fails, acceptances are refused and settlements deferred. */
  /** @returns the items refused (acceptances, when the write failed). */
  async write(batch: readonly Queued[]): Promise<Set<Queued>> {
    try {
      await this.#appendAll(batch);
      if (this.#failing) this.#report.warn('collector: the journal can be written again');
      this.#failing = false;
      this.#full = false;
      return new Set();
    } catch (error) {
      this.#failing = true;
      this.#full = isDiskFull(error);
      this.#report.error('collector: the journal could not be written (acceptances are refused until it can): %s', messageOf(error));
      this.#refusal = new StoreUnavailableError(`the journal could not be written: ${this.#full ? 'the disk is full' : messageOf(error)}`, { cause: error });
      const refused = new Set(batch.filter((item) => item.deferrable === undefined));
      const deferrable = batch.filter((item) => item.deferrable !== undefined);
      if (this.#full && deferrable.length > 0 && (await this.#reserve.spend())) {
        try {
          await this.#appendAll(deferrable);
          return refused;
        } catch {
          // Not even the reserve's room was enough: they wait in memory, as below.
        }
      }
      for (const item of deferrable) this.#deferred.add(item.deferrable!);
      if (!this.#deferred.empty && this.#retryTimer === undefined && !this.#closing) {
        this.#retryTimer = setTimeout(() => {
          this.#retryTimer = undefined;
          if (!this.#closing) void this.#commits.add(NOTHING);
        }, DEFERRED_RETRY).unref();
      }
      return refused;
    }
  }

  /** Appends items to the head, in one write; each learns where it went. */
  async #appendAll(items: readonly Queued[]): Promise<void> {
    if (this.#segments.head.broken) await this.#segments.roll();
    const head = this.#segments.head;
    let offset = await head.append(items.length === 1 ? items[0]!.bytes : Buffer.concat(items.map((item) => item.bytes)), items.some((item) => item.sync));
    for (const item of items) {
      item.written?.(head, offset);
      offset += item.bytes.length;
    }
  }
}

/**
 * A record copied into the head (forward, or from a version-1 journal): durable before the old copy
 * goes; nobody waits on it but the copier, who learns a failure from {@link JournalWriter.write}.
 */
export function copied(bytes: Buffer, written: Queued['written']): Queued {
  return { bytes, sync: true, written };
}
