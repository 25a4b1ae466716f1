import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** The first line of every segment: which format the lines after it are in. */
export const JOURNAL_VERSION = 2;
const HEADER = Buffer.from(`${JSON.stringify({ op: 'journal', version: JOURNAL_VERSION })}\n`);
const NAME = /^journal-(\d{8})\.ndjson$/;

/** The segment numbers in a directory's file names, oldest first. */
export function segmentNumbers(names: readonly string[]): number[] {
  return names.flatMap((name) => (NAME.test(name) ? [Number(NAME.exec(name)![1])] : [])).sort((a, b) => a - b);
}

export function segmentFile(dir: string, number: number): string {
  return path.join(dir, `journal-${String(number).padStart(8, '0')}.ndjson`);
}

/**
 * One file of the journal. Records are only ever appended to the newest (the head); older ones are
 * read (a delivery's bytes when it is claimed) until nothing in them is needed, then deleted whole.
 * An append is all or nothing: a write that fails part-way is cut off again, so the next record
 * never lands on the end of a broken one.
 */
export class Segment {
  readonly number: number;
  readonly file: string;
  readonly #handle: FileHandle;
  /** Where the next record starts: the end of the last whole one. */
  #size: number;
  /** Deliveries (and latest audience states) whose record is here and still needed. */
  live = 0;
  /** Their bytes: what copying them forward would write. */
  liveBytes = 0;

  /** A record of `length` bytes here is needed: it counts until {@link release}. */
  keep(length: number): void {
    this.live += 1;
    this.liveBytes += length;
  }

  /** A record of `length` bytes here is no longer needed (settled, or copied elsewhere). */
  release(length: number): void {
    this.live -= 1;
    this.liveBytes -= length;
  }
  /** A failed append could not be cut off: nothing more goes here. */
  broken = false;
  #reads = 0;
  #removed = false;

  private constructor(number: number, file: string, handle: FileHandle, size: number) {
    this.number = number;
    this.file = file;
    this.#handle = handle;
    this.#size = size;
  }

  /** A new, empty head: its header is written with its first records, so creating it needs no room. */
  static async create(dir: string, number: number): Promise<Segment> {
    const file = segmentFile(dir, number);
    const handle = await open(file, 'a+');
    const segment = new Segment(number, file, handle, (await handle.stat()).size);
    await syncDirectory(dir);
    return segment;
  }

  /** A segment a previous run wrote, for reading. */
  static async existing(dir: string, number: number): Promise<Segment> {
    const file = segmentFile(dir, number);
    const handle = await open(file, 'r');
    return new Segment(number, file, handle, (await handle.stat()).size);
  }

  get size(): number {
    return this.#size;
  }

  /**
   * Appends whole lines; with `sync`, resolves once they are on the disk, not only in the OS.
   * @returns where `lines` start in the file.
   * @throws what the OS says (ENOSPC, EIO): then the file ends where it did before.
   */
  async append(lines: Buffer, sync: boolean): Promise<number> {
    const start = this.#size;
    const bytes = start === 0 ? Buffer.concat([HEADER, lines]) : lines;
    try {
      let written = 0;
      // Nearly always one write (FileHandle.appendFile takes several steps per call).
      while (written < bytes.length) written += (await this.#handle.write(bytes, written)).bytesWritten;
      if (sync) await this.#handle.datasync();
    } catch (error) {
      // Shrinking a file needs no room: this works on a full disk too.
      await this.#handle.truncate(start).catch(() => {
        this.broken = true;
      });
      throw error;
    }
    this.#size = start + bytes.length;
    return this.#size - lines.length;
  }

  /** Reads `length` bytes at `offset`, into the start of `into` when it is given (and long enough). */
  async read(offset: number, length: number, into?: Buffer): Promise<Buffer> {
    this.#reads += 1;
    try {
      const buffer = into !== undefined && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await this.#handle.read(buffer, done, length - done, offset + done);
        if (bytesRead === 0) throw new Error(`${this.file} ends before byte ${offset + length}`);
        done += bytesRead;
      }
      return buffer;
    } finally {
      this.#reads -= 1;
      if (this.#reads === 0 && this.#removed) await this.#handle.close().catch(() => undefined);
    }
  }

  /** Deletes the file; reads under way finish first (the open handle still reads it). */
  async remove(): Promise<void> {
    await this.#let(() => unlink(this.file));
  }

  /** Renames the file to `file`, out of the journal: it is never replayed or appended to again. */
  async moveTo(file: string): Promise<void> {
    await this.#let(() => rename(this.file, file));
  }

  /** Lets the file go by `change`; reads under way finish first (the open handle still reads it). */
  async #let(change: () => Promise<void>): Promise<void> {
    await change();
    this.#removed = true;
    if (this.#reads === 0) await this.#handle.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    if (!this.#removed) await this.#handle.close();
  }
}

/** Makes a new file's name durable; some platforms cannot open a directory, and there it is not needed. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Windows: directories cannot be fsync'ed; NTFS orders the creation itself.
  } finally {
    await handle?.close();
  }
}
