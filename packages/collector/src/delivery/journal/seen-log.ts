import { randomBytes } from 'node:crypto';
import { type FileHandle, open, readdir, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { GroupCommit } from 'batched-analytics/internal';
import type { Reporter } from '../../config/report.js';
import { syncDirectory } from './segment.js';
import type { KeySeed, MessageKey } from './message-key.js';

/** What starts every file: its format, then the seed of the keys in it. */
const MAGIC = Buffer.from('BASEEN01');
const HEADER_BYTES = MAGIC.length + 8;
/** A record: the key's two halves, then when it was accepted (ms since the epoch, a double), little-endian. */
export const RECORD_BYTES = 16;
/** A new file is started once the current one's first record is older than this share of the window. */
const ROLL_SHARE = 8;
const FILE = /^seen-(\d{8})\.bin$/;
/**
 * How long, in ms, a write waits for more records after its first: nobody waits for it (see
 * `SeenIds`), so fewer, larger writes and fsyncs cost the arrivals less.
 */
const WRITE_DELAY = 50;

interface SeenFile {
  number: number;
  file: string;
  /** When its first and its latest records were accepted; 0 while it has none. */
  first: number;
  last: number;
}

/**
 * The journal's record of the ids it accepted, in files of their own in the data directory
 * (`seen-00000001.bin`, ...): 16 bytes an id, appended and fsync'ed, the appends made within
 * `WRITE_DELAY` ms of each other or while a write runs sharing one write (group commit). A new file is started
 * every eighth of the window, and a file is deleted once its latest record is older than the window:
 * on disk, about 16 bytes per id accepted within the window, and an eighth more.
 *
 * A write that fails is reported by the caller and the file is not written again (the next write
 * starts a new one), so a record cut short can only end a file, where reading drops it.
 */
export class SeenLog {
  readonly #dir: string;
  readonly #window: number;
  readonly #seed: KeySeed;
  readonly #files: SeenFile[];
  #handle: FileHandle | undefined;
  readonly #writes = new GroupCommit<Buffer>((records) => this.#write(records), { linger: WRITE_DELAY });
  /** The latest append, its failure caught: what {@link flush} waits for. */
  #latest: Promise<void> = Promise.resolve();
  /** Bytes appended and not yet written (or failed). */
  #unwritten = 0;

  private constructor(dir: string, window: number, seed: KeySeed, files: SeenFile[]) {
    this.#dir = dir;
    this.#window = window;
    this.#seed = seed;
    this.#files = files;
  }

  /**
   * Reads the files in `dir` (which exists), handing each record still within the window to
   * `record`, oldest first, and deletes the files that hold none. A file it cannot read is
   * reported to `report`.
   */
  static async open(dir: string, window: number, report: Reporter, record: (key: MessageKey, at: number) => void): Promise<SeenLog> {
    const since = Date.now() - window + 1;
    const numbers = (await readdir(dir)).flatMap((name) => FILE.exec(name)?.[1] ?? []).map(Number).sort((a, b) => a - b);
    let seed: KeySeed | undefined;
    const files: SeenFile[] = [];
    const key: MessageKey = { hi: 0, lo: 0 };
    for (const number of numbers) {
      const file = path.join(dir, fileName(number));
      const bytes = await readFile(file);
      const header = bytes.subarray(0, HEADER_BYTES);
      const fileSeed: KeySeed | undefined = header.length === HEADER_BYTES && header.subarray(0, MAGIC.length).equals(MAGIC) ? [header.readUInt32LE(8), header.readUInt32LE(12)] : undefined;
      seed ??= fileSeed;
      const found: SeenFile = { number, file, first: 0, last: 0 };
      if (fileSeed !== undefined && fileSeed[0] === seed![0] && fileSeed[1] === seed![1]) {
        // A record cut short by a crash ends the file: it was never acknowledged.
        for (let offset = HEADER_BYTES; offset + RECORD_BYTES <= bytes.length; offset += RECORD_BYTES) {
          const at = bytes.readDoubleLE(offset + 8);
          if (found.first === 0) found.first = at;
          found.last = Math.max(found.last, at);
          if (at < since) continue;
          key.hi = bytes.readUInt32LE(offset);
          key.lo = bytes.readUInt32LE(offset + 4);
          record(key, at);
        }
      } else if (bytes.length > 0) {
        report.warn('collector: %s is not a record of message ids this collector can read; the ids in it are not remembered', file);
      }
      files.push(found);
    }
    if (seed === undefined) {
      const random = randomBytes(8);
      seed = [random.readUInt32LE(0), random.readUInt32LE(4)];
    }
    const log = new SeenLog(dir, window, seed, files);
    await log.#removeExpired();
    return log;
  }

  /** The seed the keys in these files were made with. */
  get seed(): KeySeed {
    return this.#seed;
  }

  /** Appends records (each {@link RECORD_BYTES}, made by {@link encodeSeen}) and resolves once they are on disk. */
  append(records: Buffer): Promise<void> {
    this.#unwritten += records.length;
    const appended = this.#writes.add(records).finally(() => {
      this.#unwritten -= records.length;
    });
    this.#latest = appended.catch(() => undefined);
    return appended;
  }

  /** Bytes appended and not yet on disk. */
  get unwritten(): number {
    return this.#unwritten;
  }

  /** Writes what waits now, and resolves once every append made so far is written (in order: the latest ends last), or failed. */
  flush(): Promise<void> {
    void this.#writes.idle();
    return this.#latest;
  }

  async close(): Promise<void> {
    await this.#writes.idle();
    await this.#handle?.close();
    this.#handle = undefined;
  }

  async #write(batch: Buffer[]): Promise<void[]> {
    const bytes = batch.length === 1 ? batch[0]! : Buffer.concat(batch);
    const now = Date.now();
    let head = this.#files.at(-1);
    if (this.#handle === undefined || head === undefined || (head.first > 0 && head.first < now - this.#window / ROLL_SHARE)) head = await this.#roll();
    try {
      await this.#handle!.write(bytes);
      await this.#handle!.datasync();
    } catch (error) {
      // Never appended to again: what follows a record cut short would be misread.
      await this.#handle?.close().catch(() => undefined);
      this.#handle = undefined;
      throw error;
    }
    for (let offset = 8; offset < bytes.length; offset += RECORD_BYTES) {
      const at = bytes.readDoubleLE(offset);
      if (head.first === 0) head.first = at;
      head.last = Math.max(head.last, at);
    }
    await this.#removeExpired();
    return batch.map(() => undefined);
  }

  async #roll(): Promise<SeenFile> {
    await this.#handle?.close().catch(() => undefined);
    this.#handle = undefined;
    const number = (this.#files.at(-1)?.number ?? 0) + 1;
    const file = path.join(this.#dir, fileName(number));
    const header = Buffer.alloc(HEADER_BYTES);
    MAGIC.copy(header);
    header.writeUInt32LE(this.#seed[0], 8);
    header.writeUInt32LE(this.#seed[1], 12);
    const handle = await open(file, 'a');
    try {
      await handle.write(header);
      // The file's name must outlive a crash too: once the journal's segments are gone, it is all there is.
      await syncDirectory(this.#dir);
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
    this.#handle = handle;
    const created: SeenFile = { number, file, first: 0, last: 0 };
    this.#files.push(created);
    return created;
  }

  /** Deletes the oldest files while every record in them is older than the window (never the one written to). */
  async #removeExpired(): Promise<void> {
    const since = Date.now() - this.#window + 1;
    while (this.#files.length > (this.#handle === undefined ? 0 : 1) && this.#files[0]!.last < since) {
      await unlink(this.#files[0]!.file).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      this.#files.shift();
    }
  }
}

/** Writes the record of `key` accepted at `at` into `into` at `offset`. */
export function encodeSeen(key: MessageKey, at: number, into: Buffer, offset: number): void {
  into.writeUInt32LE(key.hi, offset);
  into.writeUInt32LE(key.lo, offset + 4);
  into.writeDoubleLE(at, offset + 8);
}

function fileName(number: number): string {
  return `seen-${String(number).padStart(8, '0')}.bin`;
}
