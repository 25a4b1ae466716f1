import { mkdir, open, readFile, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AnalyticsError } from '../errors.js';
import { log } from '../log.js';
import type { AudienceState } from '../webhooks/audience.js';
import { prepareWebhook } from '../webhooks/prepared.js';
import { type AudienceRecord, audienceKey, type Delivery, type Outcome, type Store, type StoreSnapshot, storeClosedError } from './store.js';

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
  | { op: 'settle'; id: string; outcome: Outcome };

interface Pending {
  record: Record_;
  text: string;
  /** Whether the caller waits for the data to reach the disk, not only the OS. */
  sync: boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

const JOURNAL = 'journal.ndjson';
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
 */
export class JournalStore implements Store {
  readonly #dir: string;
  readonly #file: string;
  readonly #compactAfter: number;
  readonly #pending = new Map<string, Delivery>();
  readonly #audiences = new Map<string, AudienceRecord>();
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
    return { pending: [...this.#pending.values()], audiences: [...this.#audiences.values()] };
  }

  accept(deliveries: readonly Delivery[], audience?: AudienceRecord): Promise<void> {
    const record: Record_ = audience ? { op: 'accept', deliveries: [...deliveries], audience } : { op: 'accept', deliveries: [...deliveries] };
    return this.#append(record, true);
  }

  settle(id: string, outcome: Outcome): Promise<void> {
    const record: Record_ = { op: 'settle', id, outcome };
    this.#apply(record);
    return this.#append(record, false);
  }

  audience(source: string, name: string): AudienceState | undefined {
    return this.#audiences.get(audienceKey(source, name))?.state;
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
      for (const delivery of record.deliveries) this.#pending.set(delivery.id, delivery);
      if (record.audience) this.#audiences.set(audienceKey(record.audience.source, record.audience.state.audience), record.audience);
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
    for (const delivery of this.#pending.values()) lines.push({ op: 'accept', deliveries: [delivery] });
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
