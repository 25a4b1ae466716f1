import { type FileHandle, mkdir, open, readFile, rename, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import { log, messageOf, type PreparedWebhook } from 'batched-analytics/internal';
import type { Reporter } from '../config/report.js';
import type { EventView } from './views.js';
import { DiskRoomReading, freeFloor, LOOK_BACK_SHARE } from '../delivery/disk.js';

/**
 * An event as the history keeps it: its latest view. What was sent, and every request, are the
 * store's delivery records: the detail view and "Send again" read them there.
 */
export interface HistoryEntry {
  view: EventView;
  /**
   * The state last written to the history (its status, and while retrying when the next attempts
   * start), so that one state is written once.
   */
  recorded?: string;
  /**
   * When the page first showed it, in µs since the epoch, increasing within a process: the order
   * the page shows after a restart (events are written as they settle, in another order).
   */
  arrived?: number;
}

/**
 * Where the live debugger keeps settled events beyond one run, so the page can page back through
 * them after a restart. Best effort: what it loses in a crash is only what the page shows, never a
 * delivery (deliveries live in the `Store`).
 */
export interface EventHistory {
  /** What earlier runs kept, oldest first, at most `retention` events. */
  open(): Promise<HistoryEntry[]>;
  /** Keeps an event's latest state; a later record of the same event replaces an earlier one. */
  record(entry: HistoryEntry): void;
  /** Keeps at most `retention` of the newest states recorded (what was recorded before included), so it stops growing. */
  compact(): void;
  /**
   * Present when other processes record into the same history (collectors sharing a database):
   * calls `listener` with the latest states of the newest `backlog` events, then with each state
   * the other processes record, until the returned function is called.
   */
  follow?(backlog: number, listener: (entries: HistoryEntry[]) => void): () => void;
  /** Resolves once what was recorded so far is written. Can be called again. */
  close(): Promise<void>;
}

const FILE = 'history.ndjson';
/**
 * Entries a rewrite joins per write: the whole history as one string would be megabytes at once
 * (10,000 events of several hundred bytes), all of it garbage a moment later.
 */
const REWRITE_CHUNK = 256;

/**
 * How long after an event is recorded its line is appended, with every line recorded meanwhile: an
 * append a few messages apart cost the collector more than the lines (each a write through the
 * thread pool). A crash loses at most this much of the page's history, never a delivery.
 * @default 250 (ms)
 */
export const APPEND_DELAY = 250;

/** Lines waiting to be appended, and the size of each in bytes. */
interface Lines {
  text: string[];
  bytes: number[];
}

/**
 * The default {@link EventHistory}: one NDJSON line per recorded state in the data directory,
 * appended without fsync. Writes run one after another, so a compaction never races an append.
 * The disk goes to the journal first: the file takes at most an eighth of its disk (beyond, it is
 * cut to its newest half, whole lines), and nothing is written while less than a quarter of the
 * disk (at most 4 GiB) is free (what is there then is let go, so that the room is the journal's).
 */
export class HistoryFile implements EventHistory {
  readonly #file: string;
  readonly #disk: DiskRoomReading;
  readonly #retention: number;
  readonly #report: Reporter;
  /** Lines recorded since the last append was queued, with their sizes; absent when none are waiting. */
  #buffer: Lines | undefined;
  /** Queues them as one append {@link APPEND_DELAY} ms after the first. */
  #flushing: NodeJS.Timeout | undefined;
  /** The writes in order; never rejects (failures are logged: the history is best effort). */
  #writes: Promise<void> = Promise.resolve();
  /** The file's size as written, in bytes. */
  #size = 0;
  /**
   * The file, open for appending between a first append and `close()` or a rewrite: opening and
   * closing it for every append cost more than the write on a busy collector.
   */
  #handle: FileHandle | undefined;

  constructor(dir: string, retention: number, report: Reporter) {
    this.#file = path.join(dir, FILE);
    this.#disk = new DiskRoomReading(dir);
    this.#retention = retention;
    this.#report = report;
  }

  async open(): Promise<HistoryEntry[]> {
    await mkdir(path.dirname(this.#file), { recursive: true });
    const kept = new Map<string, HistoryEntry>();
    let text = '';
    try {
      text = await readFile(this.#file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    this.#size = Buffer.byteLength(text);
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const entry = JSON.parse(line) as HistoryEntry;
        kept.delete(entry.view.id);
        kept.set(entry.view.id, entry);
      } catch {
        // A line cut short by a crash: the state it recorded is simply not in the history.
      }
    }
    // Lines are in the order events settled; the page shows them in the order they arrived.
    const arrival = (entry: HistoryEntry) => entry.arrived ?? Date.parse(entry.view.receivedAt) * 1_000;
    const entries = [...kept.values()].sort((a, b) => arrival(a) - arrival(b)).slice(-this.#retention);
    // Best effort: a full disk must not keep the collector from starting (and delivering).
    await this.#rewrite(entries).catch((error: unknown) => this.#report.warn('collector: could not rewrite the event history %s: %s', this.#file, messageOf(error)));
    return entries;
  }

  record(entry: HistoryEntry): void {
    if (this.#buffer === undefined) {
      this.#buffer = { text: [], bytes: [] };
      this.#flushing = setTimeout(() => this.#flush(), APPEND_DELAY).unref();
    }
    const line = `${JSON.stringify(entry)}\n`;
    this.#buffer.text.push(line);
    this.#buffer.bytes.push(Buffer.byteLength(line));
  }

  /**
   * Cuts the file to its newest `retention` lines, after appending what waits: one line per
   * recorded state, nearly always one per event (recorded when it ends). Copying the file's own
   * tail costs a read per `retention` lines; rewriting the page's kept events instead cost a line
   * serialised again, or kept aside, for every message.
   */
  compact(): void {
    this.#flush();
    this.#queue(() => this.#keepNewest());
  }

  close(): Promise<void> {
    this.#flush();
    this.#queue(() => this.#release());
    return this.#writes;
  }

  /**
   * Queues the lines recorded so far as one append. Each append writes only its own lines, so one
   * queued before a compaction cannot carry lines recorded after it (the rewrite would then erase them).
   */
  #flush(): void {
    clearTimeout(this.#flushing);
    const lines = this.#buffer;
    this.#buffer = undefined;
    if (lines !== undefined) this.#queue(() => this.#append(lines));
  }

  #queue(write: () => Promise<void>): void {
    this.#writes = this.#writes.then(write).catch((error: unknown) => log('collector: could not write the event history: %O', error));
  }

  async #append(lines: Lines): Promise<void> {
    const sizes = lines.bytes;
    if (sizes.length === 0) return;
    const disk = await this.#disk.room();
    const share = disk.total * LOOK_BACK_SHARE;
    // A drain settles many at once: of one append, only the newest half of the share is kept.
    let bytes = 0;
    let first = sizes.length;
    while (first > 0 && bytes + sizes[first - 1]! <= share / 2) bytes += sizes[--first]!;
    if (disk.free - bytes < freeFloor(disk.total)) return this.#letGo();
    if (this.#size + bytes > share) await this.#cut(share / 2 - bytes);
    const text = lines.text.slice(first).join('');
    this.#handle ??= await open(this.#file, 'a');
    await this.#handle.appendFile(text);
    this.#size += bytes;
  }

  /** Closes the file until the next append: before it is replaced, and at `close()`. */
  async #release(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    await handle?.close();
  }

  /** Gives the room the file takes back to the journal: the page loses its older events after a restart, nothing else. */
  async #letGo(): Promise<void> {
    if (this.#size === 0) return;
    await truncate(this.#file, 0);
    this.#size = 0;
    this.#report.warn('collector: the disk is short: the live page\'s history (%s) is emptied and not written until there is room', this.#file);
  }

  /** Keeps the newest `retention` lines of the file. */
  async #keepNewest(): Promise<void> {
    // Nothing appended yet (or let go): no file to cut, or an empty one.
    if (this.#size === 0) return;
    await this.#keepFrom((text) => {
      // The last byte is a line's end: the search starts before it.
      let end = text.length - 1;
      for (let lines = 0; lines < this.#retention && end > 0; lines++) end = text.lastIndexOf(0x0a, end - 1);
      return end + 1;
    });
  }

  /** Keeps the newest whole lines of the file within `most` bytes. */
  async #cut(most: number): Promise<void> {
    await this.#keepFrom((text) => (most <= 0 ? text.length : text.indexOf(0x0a, Math.max(0, text.length - most - 1)) + 1));
  }

  /** Keeps the file from the byte `start` finds in it on (a line's start); from 0, as it is. */
  async #keepFrom(start: (text: Buffer) => number): Promise<void> {
    const text = await readFile(this.#file);
    const from = start(text);
    if (from > 0) await this.#replace(text.subarray(from));
  }

  /** The newest of `entries` that fit the disk's share, written aside and renamed over. */
  async #rewrite(entries: HistoryEntry[]): Promise<void> {
    const disk = await this.#disk.room();
    // Newest first, as far as the disk's share goes: each line made once, for its size and its write.
    const lines: string[] = [];
    for (let bytes = 0, index = entries.length - 1; index >= 0; index--) {
      const line = `${JSON.stringify(entries[index])}\n`;
      bytes += Buffer.byteLength(line);
      if (bytes > disk.total * LOOK_BACK_SHARE) break;
      lines.push(line);
    }
    lines.reverse();
    await this.#replace(async (write) => {
      for (let from = 0; from < lines.length; from += REWRITE_CHUNK) await write(lines.slice(from, from + REWRITE_CHUNK).join(''));
    });
  }

  /** Written aside and renamed over, so a crash leaves the old file or the new one, whole. */
  async #replace(content: Buffer | ((write: (text: string) => Promise<unknown>) => Promise<void>)): Promise<void> {
    await this.#release();
    const aside = `${this.#file}.tmp`;
    let size = 0;
    try {
      const file = await open(aside, 'w');
      try {
        const write = (data: string | Buffer) => {
          size += Buffer.byteLength(data);
          return typeof data === 'string' ? file.write(data) : file.write(data);
        };
        await (Buffer.isBuffer(content) ? write(content) : content(write));
      } finally {
        await file.close();
      }
    } catch (error) {
      // Cut short by a full disk: what it wrote would only hold the room.
      await rm(aside, { force: true });
      throw error;
    }
    await rename(aside, this.#file);
    this.#size = size;
  }
}
