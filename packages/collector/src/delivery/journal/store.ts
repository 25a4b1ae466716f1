import { randomUUID } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { type AudienceState, InProgress, integer, log, messageOf } from 'batched-analytics/internal';
import { StoreClosedError } from '../errors.js';
import { type CollectorLogger, Reporter } from '../../config/report.js';
import { DEDUPE_DEFAULTS, RETENTION_DEFAULTS } from '../../config/config.js';
import { Compaction } from './compaction.js';
import { type DeferrableRecord } from './deferred.js';
import { encodeAccept, type SeenRecord } from './format.js';
import { lockDataDir, unlockDataDir } from './lock.js';
import { PendingIndex } from './pending-index.js';
import { readDeliveries } from './read-deliveries.js';
import { replay } from './replay.js';
import { Reserve } from './reserve.js';
import { RetiredSegments, recordsFile } from './retired.js';
import { givenUp, searchJournal, type Wanted } from './search.js';
import { SeenIds } from './seen-ids.js';
import { segmentFile } from './segment.js';
import { Segments } from './segments.js';
import { UrlStateFile } from './url-state-file.js';
import { upgradeVersion1 } from './version1.js';
import { JournalWriter } from './writer.js';
import type { UrlState, UrlStateChange } from '../url-states.js';
import {
  type Arrival,
  type AttemptRecord,
  type AudiencePlan,
  type AudienceRecord,
  type Backlog,
  type Claimed,
  type ClaimOptions,
  type Delivery,
  type DeliveryRecord,
  type Ingested,
  type Recovered,
  type RecoverQuery,
  type Outcome,
  type Store,
  type StoreSnapshot,
  StoreUnavailableError,
} from '../store.js';
import { sourceKey } from '../source-key.js';

/** Options of {@link JournalStore}. */
export interface JournalOptions {
  /**
   * A new segment file is started once the current one holds this many bytes (or an eighth of it
   * when nothing in it is pending any more, or less when it holds more than the disk has left). A segment is deleted once nothing in it is pending;
   * and once the journal is larger than twice what is pending plus one segment, the oldest
   * segment's pending deliveries are copied forward and it is deleted. So the journal's disk
   * space comes back as deliveries settle, and reclaiming it never needs room for a full copy.
   * @default 8388608 (8 MiB); at least 1024
   */
  segmentSize?: number;
  /**
   * Bytes of disk set aside (a file, `reserve`, in the data directory) for settlements and retries
   * when the disk fills: they are written into it, so a crash before there is room again repeats
   * none of the deliveries they record. While it is spent, acceptances are refused; it is set
   * aside again once there is room. About 80 bytes a settlement: the default holds more than
   * `queue.maxInFlight` deliveries. 0: none (settlements wait for room in memory).
   * @default 1048576 (1 MiB)
   */
  reserve?: number;
  /**
   * How long, in ms, a source's `messageId` is remembered for {@link JournalStore.ingest}: in
   * memory (16 bytes a slot, see `SeenTable`), in `seen-*.bin` files beside the segments, and in
   * the acceptance lines of the messages forwarded. 0: off.
   * @default 86400000 (24 h)
   */
  dedupeWindow?: number;
  /**
   * How long, in ms, settled deliveries stay readable (`lookup`, `find`): a segment nothing
   * pending is left in is kept under another name (see {@link RetiredSegments}) instead of being
   * deleted. 0: deleted at once.
   * @default 86400000 (24 h)
   */
  keepSettledFor?: number;
  /**
   * Bytes of such segments kept at most (and never more than an eighth of the disk).
   * @default 268435456 (256 MiB)
   */
  keepSettledBytes?: number;
  /**
   * Where the journal's warnings and errors go (a full disk, an unreadable line), rate-limited.
   * @default one human line each on stderr
   */
  logger?: CollectorLogger;
}

/** The defaults of {@link JournalOptions}. */
export const JOURNAL_DEFAULTS: Readonly<Required<Omit<JournalOptions, 'logger'>>> = Object.freeze({
  segmentSize: 8 * 1024 * 1024,
  reserve: 1024 * 1024,
  dedupeWindow: DEDUPE_DEFAULTS.window,
  keepSettledFor: RETENTION_DEFAULTS.keepFor,
  keepSettledBytes: RETENTION_DEFAULTS.maxBytes,
});

/**
 * The default {@link Store}: an append-only NDJSON journal in a data directory, one line per
 * transaction, in segment files (`journal-00000001.ndjson`, ...). Acceptances are fsync'ed before
 * they resolve; concurrent ones share one write and one fsync (group commit). Settlements and
 * retries are appended without fsync: a crash may forget one, and then the message is delivered
 * again (at-least-once). A write is all or nothing: one that fails part-way is cut off again.
 *
 * When the disk is full or failing, acceptances are refused with {@link StoreUnavailableError}
 * (the collector answers 503) while settlements are kept and written once there is room; as
 * deliveries settle, the segments they emptied are deleted, and acceptances succeed again by
 * themselves. Opening needs no room: it only reads, and starts a new, empty segment.
 *
 * Only where each pending delivery lies is kept in memory, with its schedule (a {@link PendingIndex});
 * a delivery is read back from its segment when it is claimed. Claims live in memory (one process
 * uses the directory); a restart voids them. A lock file keeps a second process out.
 *
 * The parts it composes: the {@link PendingIndex}, the {@link Segments} (replayed at start by
 * {@link replay}), the {@link JournalWriter} that appends to them, and the {@link Compaction} that
 * gives their disk back after each write.
 */
export class JournalStore implements Store {
  readonly #dir: string;
  /** What is pending: deliveries and audiences. */
  readonly #index = new PendingIndex();
  /** Per audience, the end of the latest sync queued: syncs of one audience run one at a time. */
  readonly #syncs = new Map<string, Promise<unknown>>();
  /** The journal's files, oldest first. */
  readonly #segments: Segments;
  /** Appends to the head, grouped; refuses acceptances while the disk is full or failing. */
  readonly #writer: JournalWriter;
  /** Gives disk space back after each write. */
  readonly #compaction: Compaction;
  readonly #dedupeWindow: number;
  readonly #report: Reporter;
  /** The ids accepted within the window, once open; absent with a window of 0. */
  #seen: SeenIds | undefined;
  /** Room kept for settlements when the disk fills. */
  readonly #reserve: Reserve;
  /** The recovery in progress, if any: the next waits for it. */
  #recovering: Promise<unknown> = Promise.resolve();
  /** Segments nothing pending is left in, kept for looking deliveries up. */
  readonly #retired: RetiredSegments;
  /** Claims reading their deliveries: close waits for them. */
  readonly #reading = new InProgress();
  #closing: Promise<void> | undefined;

  /**
   * @param dir the data directory; created when missing.
   * @throws {ConfigError} when `segmentSize` is not an integer >= 1024.
   */
  constructor(dir: string, options: JournalOptions = {}) {
    this.#dir = dir;
    this.#segments = new Segments(dir);
    const segmentSize = integer('segmentSize', options.segmentSize ?? JOURNAL_DEFAULTS.segmentSize, 1_024);
    this.#dedupeWindow = integer('dedupeWindow', options.dedupeWindow ?? JOURNAL_DEFAULTS.dedupeWindow, 0);
    this.#report = new Reporter(options.logger);
    this.#reserve = new Reserve(dir, integer('reserve', options.reserve ?? JOURNAL_DEFAULTS.reserve, 0), this.#report);
    this.#retired = new RetiredSegments(
      dir,
      {
        age: integer('keepSettledFor', options.keepSettledFor ?? JOURNAL_DEFAULTS.keepSettledFor, 0),
        bytes: integer('keepSettledBytes', options.keepSettledBytes ?? JOURNAL_DEFAULTS.keepSettledBytes, 0),
      },
      this.#report,
    );
    this.#writer = new JournalWriter(this.#segments, this.#reserve, this.#report, () => this.#compaction.maintain());
    this.#compaction = new Compaction({
      dir,
      segmentSize,
      segments: this.#segments,
      index: this.#index,
      writer: this.#writer,
      reserve: this.#reserve,
      retired: this.#retired,
      flushSeen: () => this.#seen?.flush(),
    });
  }

  /**
   * Takes the directory's lock, replays the segments, upgrades a version-1 journal, and deletes
   * the segments nothing pending is left in.
   * @throws {DataDirLockedError} when another live process holds the directory.
   */
  async open(): Promise<StoreSnapshot> {
    await mkdir(this.#dir, { recursive: true });
    await lockDataDir(this.#dir, this.#report);
    // First: replaying the segments adds the ids their acceptances carry.
    if (this.#dedupeWindow > 0) this.#seen = await SeenIds.open(this.#dir, this.#dedupeWindow, this.#report);
    await this.#segments.open((segment) => replay(segment, this.#index, this.#seen, this.#report));
    await upgradeVersion1(this.#dir, this.#index, this.#writer, this.#report);
    await this.#retired.open();
    await this.#compaction.removeDead();
    this.#index.opened();
    if (!(await this.#reserve.setAside())) {
      this.#report.warn('collector: the disk is full: no room could be set aside for settlements (journal reserve); acceptances are refused until it can');
    }
    log('collector: journal replayed: %d pending, %d audiences, %d segment(s)', this.#index.size, this.#index.audiences, this.#segments.all.length);
    return { pending: this.#index.size };
  }

  accept(deliveries: readonly Delivery[], options?: ClaimOptions): Promise<Claimed[]> {
    return this.#accept(deliveries, undefined, options);
  }

  /**
   * The ids are claimed in memory at once. A forwarded message's id is journaled with its delivery,
   * in the one fsync'ed write of the acceptance; every id is then written to the seen log behind it,
   * not waited for (see {@link SeenIds}).
   */
  async ingest(arrivals: readonly Arrival[], options?: ClaimOptions): Promise<Ingested> {
    this.#usable();
    const seen = this.#seen?.claim(arrivals);
    const forwarded = arrivals.filter(({ delivery }, index) => delivery !== undefined && seen?.repeats[index] === undefined);
    let claimed: Claimed[] = [];
    try {
      if (forwarded.length > 0) {
        const deliveries = forwarded.map(({ delivery }) => delivery!);
        const ids = seen === undefined ? undefined : { at: seen.at, messageIds: forwarded.map(({ messageId }) => messageId), durable: seen.commit };
        claimed = await this.#accept(deliveries, undefined, options, ids);
      } else seen?.commit();
    } catch (error) {
      seen?.abandon(error);
      throw error;
    }
    await seen?.firsts();
    await this.#seen?.paced();
    return { claimed, repeats: seen?.repeats ?? arrivals.map(() => undefined) };
  }

  async syncAudience<P extends AudiencePlan>(
    source: string,
    name: string,
    plan: (previous: AudienceState | undefined) => P,
    options?: ClaimOptions,
  ): Promise<{ plan: P; claimed: Claimed[] }> {
    const key = sourceKey(source, name);
    const sync = async () => {
      // What a sync reads is what the previous one recorded: they run one after another.
      const planned = plan(this.#index.audience(key)?.state);
      return { plan: planned, claimed: await this.#accept(planned.deliveries, { source, state: planned.state }, options) };
    };
    const run = (this.#syncs.get(key) ?? Promise.resolve()).then(sync, sync);
    this.#syncs.set(key, run);
    try {
      return await run;
    } finally {
      if (this.#syncs.get(key) === run) this.#syncs.delete(key);
    }
  }

  async claim(limit: number, lease: number): Promise<Claimed[]> {
    this.#usable();
    const now = Date.now();
    const claim = randomUUID();
    const taken = this.#index.claimDue(now, limit, claim, now + lease);
    if (taken.length === 0) return [];
    try {
      const deliveries = await this.#reading.track(readDeliveries(taken));
      return taken.map((entry, index) => this.#index.claimed(entry, deliveries[index]!));
    } catch (error) {
      this.#index.giveBack(taken, claim, now);
      throw new StoreUnavailableError(`the journal could not be read: ${messageOf(error)}`, { cause: error });
    }
  }

  async renew(held: readonly Claimed[], lease: number): Promise<Claimed[]> {
    this.#usable();
    return this.#index.renew(held, Date.now() + lease);
  }

  async retry(held: Claimed, delay: number, targets: readonly number[], attempts?: readonly AttemptRecord[], waitingFor: readonly number[] = []): Promise<boolean> {
    this.#usable();
    const at = Date.now() + delay;
    const entry = this.#index.retry(held, at, targets, waitingFor);
    if (entry === undefined) return false;
    // Without fsync, as settlements: a crash may forget it, and then the retry comes early.
    const record: DeferrableRecord = { op: 'retry', id: entry.id, at, attempts: entry.attempts, targets: entry.targets! };
    if (entry.waitingFor !== undefined) record.waitingFor = entry.waitingFor;
    if (attempts !== undefined && attempts.length > 0) record.log = [...attempts];
    await this.#writer.appendDeferrable(record);
    return true;
  }

  async settle(held: Claimed, outcome: Outcome, attempts?: readonly AttemptRecord[]): Promise<boolean> {
    this.#usable();
    const entry = this.#index.settle(held);
    if (entry === undefined) return false;
    const record: DeferrableRecord = { op: 'settle', id: entry.id, outcome, settledAt: Date.now() };
    if (attempts !== undefined && attempts.length > 0) record.log = [...attempts];
    await this.#writer.appendDeferrable(record);
    return true;
  }

  /** Reads the retired segments, then the journal's: a lookup costs a read of each (see {@link searchJournal}). */
  lookup(messageId: string): Promise<DeliveryRecord[]> {
    return this.#search({ messageId });
  }

  async find(id: string): Promise<DeliveryRecord | undefined> {
    return (await this.#search({ id }))[0];
  }

  /**
   * Recoveries run one at a time (one process owns the journal): each reads the settlements as
   * failed within the window and the recoveries journaled before it, so none sends one twice.
   * The deliveries read back are held in memory at once: at most what the journal keeps.
   */
  recover(query: RecoverQuery, redeliver: (record: DeliveryRecord) => Delivery | undefined, options?: ClaimOptions): Promise<Recovered> {
    const run = async (): Promise<Recovered> => {
      const ids = await this.#reading.track(givenUp(this.#readers(), query));
      const records = ids.size === 0 ? [] : await this.#search({ ids });
      const originals: string[] = [];
      const recorded: Delivery[] = [];
      for (const record of records) {
        if (record.delivery.source !== query.source) continue;
        const made = redeliver(record);
        if (made === undefined) continue;
        originals.push(record.delivery.id);
        recorded.push(made);
      }
      const claimed = recorded.length === 0 ? [] : await this.#accept(recorded, undefined, options, undefined, originals);
      return { claimed, recorded };
    };
    const next = this.#recovering.then(run, run);
    this.#recovering = next.catch(() => undefined);
    return next;
  }

  /**
   * Not journaled: after a restart the deliveries wait out their backoffs again, until the URL's
   * next successful probe hastens them once more.
   */
  async hasten(source: string, target: number): Promise<number> {
    this.#usable();
    return this.#index.hasten(source, target, Date.now());
  }

  async release(held: readonly Claimed[]): Promise<void> {
    this.#index.release(held, Date.now());
  }

  async backlog(): Promise<Backlog> {
    return this.#index.backlog();
  }

  /** One process owns a journal: no other leaves work in it. */
  onWork(): () => void {
    return () => undefined;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#writer.close();
      await this.#reading.settled();
      await Promise.all([this.#segments.close(), this.#seen?.close()]);
      await unlockDataDir(this.#dir);
    })();
    return this.#closing;
  }

  /**
   * Journals an acceptance durably, then claims the first `options.claim` of its deliveries.
   * `seen`: the ids its deliveries claimed, journaled with them; `durable` is called once they are on disk.
   * `recovers`: the deliveries a recovery sends again, marked in the same line.
   */
  async #accept(
    deliveries: readonly Delivery[],
    audience: AudienceRecord | undefined,
    options: ClaimOptions | undefined,
    seen?: SeenRecord & { durable: () => void },
    recovers?: readonly string[],
  ): Promise<Claimed[]> {
    const bodies = deliveries.map((delivery) => Buffer.from(JSON.stringify(delivery)));
    const order = this.#index.order(deliveries.length);
    const { line: bytes, starts } = encodeAccept(order, bodies, { audience, seen, recovers });
    const claimed: Claimed[] = [];
    await this.#writer.append(bytes, {
      sync: true,
      // In the same step as the write's end: no claim() can take these before the caller does.
      written: (segment, offset) => {
        const claim = options !== undefined && options.claim > 0 ? randomUUID() : undefined;
        const until = Date.now() + (options?.lease ?? 0);
        deliveries.forEach((delivery, index) => {
          const entry = this.#index.enter(delivery, segment, offset + starts[index]!, bodies[index]!.length, order + index);
          if (claim !== undefined && index < options!.claim) claimed.push(this.#index.take(entry, claim, until, delivery));
        });
        if (audience !== undefined) this.#index.keepAudience(audience, segment, bytes.length);
        // Before any segment can be deleted after this write: the seen log is flushed first.
        seen?.durable();
      },
    });
    return claimed;
  }

  /**
   * Each file once, oldest first. A segment retired while the search runs is read under its new
   * name; one deleted meanwhile is skipped (what it held is past the retention).
   */
  async #search(wanted: Wanted): Promise<DeliveryRecord[]> {
    return this.#reading.track(searchJournal(this.#readers(), wanted));
  }

  /** A reader per file: the retired segments, then the journal's, oldest first. */
  #readers(): (() => Promise<Buffer | undefined>)[] {
    this.#usable();
    const numbers = [...this.#retired.numbers, ...this.#segments.all.map(({ number }) => number)];
    return numbers.map((number) => async () => {
      for (const file of [segmentFile(this.#dir, number), recordsFile(this.#dir, number)]) {
        try {
          return await readFile(file);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
      }
      return undefined;
    });
  }

  #usable(): void {
    if (this.#closing) throw new StoreClosedError();
  }

  // The URLs' states, in a file of their own beside the segments (see UrlStateFile).
  #urls: UrlStateFile | undefined;

  async urlStates(): Promise<UrlState[]> {
    this.#usable();
    return (this.#urls ??= new UrlStateFile(this.#dir)).urlStates();
  }

  async changeUrlState(source: string, url: string, change: UrlStateChange): Promise<{ before: UrlState | undefined; after: UrlState | undefined }> {
    this.#usable();
    return (this.#urls ??= new UrlStateFile(this.#dir)).changeUrlState(source, url, change);
  }
}


