import { mkdir, open, readFile, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AnalyticsError, type AudienceState, log, prepareWebhook } from 'batched-analytics/internal';
import { DueQueue } from './due-queue.js';
import {
  type AudiencePlan,
  type AudienceRecord,
  audienceKey,
  type Backlog,
  type Claimed,
  type ClaimOptions,
  type Delivery,
  type Outcome,
  type Store,
  type StoreSnapshot,
  storeClosedError,
} from './store.js';

/** Options of {@link JournalStore}. */
export interface JournalOptions {
  /**
   * Rewrite the journal with only what is still pending once this many bytes were appended since
   * the last rewrite, and at least as many as that rewrite wrote (so a large backlog is not
   * rewritten over and over: the cost of rewriting stays at most that of appending).
   * @default 16777216 (16 MiB)
   */
  compactAfter?: number;
}

type Record_ =
  | { op: 'journal'; version: number }
  | { op: 'accept'; deliveries: Delivery[]; audience?: AudienceRecord }
  | { op: 'retry'; id: string; at: number; attempts: number; targets: number[] }
  | { op: 'settle'; id: string; outcome: Outcome };

/** A delivery not yet settled, with its schedule. */
interface Entry {
  delivery: Delivery;
  /** Acceptance order: claims among deliveries due at once go oldest first. */
  order: number;
  /** Attempts started. */
  attempts: number;
  targets?: number[];
  /** When it may be claimed (ms since the epoch): at once, at its retry, or when its claim lapses. */
  due: number;
  claim?: string;
}

interface Pending {
  record: Record_;
  text: string;
  /** Whether the caller waits for the data to reach the disk, not only the OS. */
  sync: boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

const JOURNAL = 'journal.ndjson';
/** Stale queue entries tolerated beyond twice the pending count before the due queue is rebuilt. */
const STALE_SLACK = 4_096;
const LOCK = 'lock';
const VERSION = 1;

/**
 * The default {@link Store}: an append-only NDJSON journal in a data directory, one line per
 * transaction. Acceptances are fsync'ed before they resolve; concurrent ones share one write and
 * one fsync (group commit), so throughput is bound by the disk's fsync rate, not by request count.
 * Settlements are appended without fsync: a crash may forget one, and then the message is
 * delivered again (at-least-once). On open, and again once `compactAfter` bytes (and at least the
 * live state's size) were appended, the journal is rewritten with only the live state (written
 * aside, fsync'ed, renamed over).
 * A lock file keeps a second process from using the same directory.
 *
 * Claims live in memory (one process uses the directory): a delivery's schedule is kept in a
 * {@link DueQueue}. A retry is journaled (without fsync) with its time, attempts and targets, so a
 * restart keeps it; a lapsed claim is simply due again. Claims are not journaled: a restart voids them.
 */
export class JournalStore implements Store {
  readonly #dir: string;
  readonly #file: string;
  readonly #compactAfter: number;
  readonly #pending = new Map<string, Entry>();
  /**
   * Pending deliveries' ids by when they may be claimed. An id is queued again whenever its time
   * changes, and a stale queuing is skipped when taken; ids, not entries, so that what was settled
   * is not kept alive by them.
   */
  readonly #due = new DueQueue<string>();
  #accepted = 0;
  readonly #audiences = new Map<string, AudienceRecord>();
  /** Per audience, the end of the latest sync queued: syncs of one audience run one at a time. */
  readonly #syncs = new Map<string, Promise<unknown>>();
  #handle: FileHandle | undefined;
  #appended = 0;
  /** Bytes the latest compaction wrote: the live state's size then. */
  #compacted = 0;
  #queue: Pending[] = [];
  /** The write loop; absent while nothing is queued. */
  #writing: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  /** @param dir the data directory; created when missing. */
  constructor(dir: string, options: JournalOptions = {}) {
    this.#dir = dir;
    this.#file = path.join(dir, JOURNAL);
    this.#compactAfter = options.compactAfter ?? 16 * 1024 * 1024;
  }

  /**
   * Takes the directory's lock, replays the journal and compacts it.
   * @throws {AnalyticsError} `ERR_DATA_DIR_LOCKED` when another live process holds the directory.
   */
  async open(): Promise<StoreSnapshot> {
    await mkdir(this.#dir, { recursive: true });
    await this.#lock();
    await this.#replay();
    await this.#compact();
    return { pending: this.#pending.size };
  }

  async accept(deliveries: readonly Delivery[], options?: ClaimOptions): Promise<Claimed[]> {
    return this.#accept({ op: 'accept', deliveries: [...deliveries] }, options);
  }

  async syncAudience<P extends AudiencePlan>(
    source: string,
    name: string,
    plan: (previous: AudienceState | undefined) => P,
    options?: ClaimOptions,
  ): Promise<{ plan: P; claimed: Claimed[] }> {
    const key = audienceKey(source, name);
    const sync = (async () => {
      // What a sync reads is what the previous one recorded: they run one after another.
      const planned = plan(this.#audiences.get(key)?.state);
      const record: Record_ = { op: 'accept', deliveries: [...planned.deliveries], audience: { source, state: planned.state } };
      return { plan: planned, claimed: await this.#accept(record, options) };
    });
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
    const claim = crypto.randomUUID();
    const claimed: Claimed[] = [];
    while (claimed.length < limit) {
      const next = this.#due.takeDue(now);
      if (next === undefined) break;
      const entry = this.#pending.get(next.item);
      // Only the latest queuing of a pending delivery counts.
      if (entry === undefined || next.due !== entry.due) continue;
      claimed.push(this.#take(entry, claim, now + lease));
    }
    return claimed;
  }

  async renew(held: readonly Claimed[], lease: number): Promise<Claimed[]> {
    this.#usable();
    const until = Date.now() + lease;
    const lost: Claimed[] = [];
    for (const claimed of held) {
      const entry = this.#held(claimed);
      if (entry === undefined) lost.push(claimed);
      else this.#schedule(entry, until);
    }
    return lost;
  }

  async retry(held: Claimed, delay: number, targets: readonly number[]): Promise<boolean> {
    this.#usable();
    const entry = this.#held(held);
    if (entry === undefined) return false;
    const at = Date.now() + delay;
    entry.claim = undefined;
    entry.targets = [...targets];
    this.#schedule(entry, at);
    // Without fsync, as settlements: a crash may forget it, and then the retry comes early.
    await this.#append({ op: 'retry', id: entry.delivery.id, at, attempts: entry.attempts, targets: entry.targets }, false);
    return true;
  }

  async settle(held: Claimed, outcome: Outcome): Promise<boolean> {
    this.#usable();
    if (this.#held(held) === undefined) return false;
    const record: Record_ = { op: 'settle', id: held.delivery.id, outcome };
    this.#apply(record);
    await this.#append(record, false);
    return true;
  }

  async release(held: readonly Claimed[]): Promise<void> {
    const now = Date.now();
    for (const claimed of held) {
      const entry = this.#held(claimed);
      if (entry === undefined) continue;
      entry.claim = undefined;
      entry.attempts -= 1;
      this.#schedule(entry, now);
    }
  }

  async backlog(): Promise<Backlog> {
    // The map keeps acceptance order (replay and compaction keep the journal's order), and each
    // delivery's receivedAt is its acceptance time: the first entry is the oldest, read in O(1).
    const [first] = this.#pending.values();
    return { pending: this.#pending.size, oldestAt: first?.delivery.webhook.receivedAt };
  }

  /** One process owns a journal: no other leaves work in it. */
  onWork(): () => void {
    return () => undefined;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#writing;
      await this.#handle?.close();
      this.#handle = undefined;
      await unlink(path.join(this.#dir, LOCK)).catch(() => undefined);
    })();
    return this.#closing;
  }

  /** Journals an acceptance durably, then claims the first `options.claim` of its deliveries. */
  async #accept(record: Record_ & { op: 'accept' }, options: ClaimOptions | undefined): Promise<Claimed[]> {
    await this.#append(record, true);
    if (options === undefined || options.claim <= 0) return [];
    const claim = crypto.randomUUID();
    const until = Date.now() + options.lease;
    return record.deliveries.slice(0, options.claim).map((delivery) => this.#take(this.#pending.get(delivery.id)!, claim, until));
  }

  #take(entry: Entry, claim: string, until: number): Claimed {
    entry.claim = claim;
    entry.attempts += 1;
    this.#schedule(entry, until);
    const claimed: Claimed = { delivery: entry.delivery, claim, attempt: entry.attempts };
    if (entry.targets !== undefined) claimed.targets = entry.targets;
    return claimed;
  }

  /** The entry a claim still holds; undefined once it was settled, retried or taken over. */
  #held(claimed: Claimed): Entry | undefined {
    const entry = this.#pending.get(claimed.delivery.id);
    return entry?.claim === claimed.claim ? entry : undefined;
  }

  #schedule(entry: Entry, due: number): void {
    entry.due = due;
    this.#due.add(entry.delivery.id, due, entry.order);
    // Every claim queues its lease's end; settled deliveries leave those behind. Rebuilt once they
    // outnumber what is pending, the queue stays within a small multiple of the backlog.
    if (this.#due.size > 2 * this.#pending.size + STALE_SLACK) {
      this.#due.reset([...this.#pending.values()].map(({ delivery, due: at, order }) => ({ item: delivery.id, due: at, order })));
    }
  }

  #usable(): void {
    if (this.#closing) throw storeClosedError();
  }

  #append(record: Record_, sync: boolean): Promise<void> {
    if (this.#closing) return Promise.reject(storeClosedError());
    return new Promise((resolve, reject) => {
      this.#queue.push({ record, text: `${JSON.stringify(record)}\n`, sync, resolve, reject });
      this.#writing ??= this.#drain();
    });
  }

  /** Writes everything queued meanwhile in one go, so concurrent callers share one fsync. */
  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0);
      const bytes = Buffer.from(batch.map((entry) => entry.text).join(''));
      try {
        const handle = this.#handle!;
        await writeAll(handle, bytes);
        if (batch.some((entry) => entry.sync)) await handle.datasync();
        this.#appended += bytes.length;
        for (const entry of batch) {
          // Acceptances enter the live state only once durable: a failed write leaves no trace.
          if (entry.record.op === 'accept') this.#apply(entry.record);
          entry.resolve();
        }
      } catch (error) {
        log('collector: journal write failed: %O', error);
        for (const entry of batch) entry.reject(error as Error);
      }
      if (this.#appended >= Math.max(this.#compactAfter, this.#compacted)) await this.#compact().catch((error) => log('collector: compaction failed: %O', error));
    }
    // In the same synchronous step as the empty-queue check: an append from now on starts a new loop.
    this.#writing = undefined;
  }

  #apply(record: Record_): void {
    if (record.op === 'accept') {
      for (const delivery of record.deliveries) {
        const entry: Entry = { delivery, order: this.#accepted++, attempts: 0, due: 0 };
        this.#pending.set(delivery.id, entry);
        this.#schedule(entry, 0);
      }
      if (record.audience) this.#audiences.set(audienceKey(record.audience.source, record.audience.state.audience), record.audience);
    } else if (record.op === 'retry') {
      const entry = this.#pending.get(record.id);
      if (entry === undefined) return;
      entry.attempts = record.attempts;
      entry.targets = record.targets;
      this.#schedule(entry, record.at);
    } else if (record.op === 'settle') {
      this.#pending.delete(record.id);
    }
  }

  async #replay(): Promise<void> {
    const text = await readFile(this.#file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    const lines = text.split('\n');
    lines.forEach((line, index) => {
      if (line === '') return;
      let record: Record_;
      try {
        record = JSON.parse(line) as Record_;
      } catch {
        // The last line may be a write cut short by a crash: its caller never got its 200.
        if (index !== lines.length - 1) log('collector: skipping unreadable journal line %d', index + 1);
        return;
      }
      if (record.op === 'journal' && record.version !== VERSION) {
        throw new AnalyticsError(`${this.#file} has journal version ${record.version}; this collector reads version ${VERSION}`, {
          code: 'ERR_JOURNAL_VERSION',
        });
      }
      if (record.op === 'accept') record.deliveries = record.deliveries.map(upgrade);
      this.#apply(record);
    });
    log('collector: journal replayed: %d pending, %d audiences', this.#pending.size, this.#audiences.size);
  }

  /** Rewrites the journal as the live state only, atomically: a crash leaves the old or the new file. */
  async #compact(): Promise<void> {
    const lines: Record_[] = [{ op: 'journal', version: VERSION }];
    for (const { delivery, attempts, targets, due, claim } of this.#pending.values()) {
      lines.push({ op: 'accept', deliveries: [delivery] });
      // A claim in progress is void after a restart: its delivery is due at once then.
      if (targets !== undefined) lines.push({ op: 'retry', id: delivery.id, at: claim === undefined ? due : 0, attempts, targets });
    }
    for (const audience of this.#audiences.values()) lines.push({ op: 'accept', deliveries: [], audience });
    const text = lines.map((line) => `${JSON.stringify(line)}\n`).join('');
    const aside = `${this.#file}.tmp`;
    const handle = await open(aside, 'w');
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await this.#handle?.close();
    await rename(aside, this.#file);
    await syncDirectory(this.#dir);
    this.#handle = await open(this.#file, 'a');
    this.#appended = 0;
    this.#compacted = Buffer.byteLength(text);
    log('collector: journal compacted to %d bytes', this.#compacted);
  }

  async #lock(): Promise<void> {
    const file = path.join(this.#dir, LOCK);
    try {
      await writeFile(file, String(process.pid), { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
      throw new AnalyticsError(`${this.#dir} is in use by process ${holder} (${file})`, { code: 'ERR_DATA_DIR_LOCKED' });
    }
    // Left behind by a process that was killed: take it over.
    await writeFile(file, String(process.pid));
  }
}

/**
 * A delivery journaled before bodies were fixed at acceptance has its message and acceptance
 * time: its body is made from them once, here, and journaled with it at the compaction after replay.
 */
function upgrade(delivery: Delivery & { acceptedAt?: number }): Delivery {
  if (delivery.webhook !== undefined) return delivery;
  const { acceptedAt, ...rest } = delivery;
  return { ...rest, webhook: prepareWebhook(delivery.message, acceptedAt ?? Date.now()) };
}

/**
 * Appends bytes with as few writes as the OS allows: one, nearly always. (`FileHandle.appendFile`
 * takes several steps per call, a measurable share of the collector's time with one settle
 * record per delivered message.)
 */
async function writeAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += (await handle.write(bytes, written)).bytesWritten;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Makes a rename durable; some platforms cannot open a directory, and there it is not needed. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Windows: directories cannot be fsync'ed; NTFS orders the rename itself.
  } finally {
    await handle?.close();
  }
}
