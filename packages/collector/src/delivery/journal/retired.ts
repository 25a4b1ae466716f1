import { readdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { log, messageOf } from 'batched-analytics/internal';
import type { Reporter } from '../../config/report.js';
import type { Segment } from './segment.js';
import { diskRoom, freeFloor, LOOK_BACK_SHARE } from '../disk.js';

const NAME = /^records-(\d{8})\.ndjson$/;

/** The name a segment takes once it is retired: the same number, out of the journal's names. */
export function recordsFile(dir: string, number: number): string {
  return path.join(dir, `records-${String(number).padStart(8, '0')}.ndjson`);
}

/** How long, and how much of, what has settled the journal keeps (see {@link RetiredSegments}). */
export interface RecordRetention {
  /** ms since a retired segment's last write; 0: segments are deleted as soon as nothing in them is pending. */
  age: number;
  /** Bytes of retired segments kept at most. */
  bytes: number;
}

/** How often the age limit is looked at, at most, in ms. */
const TRIM_EVERY = 60_000;

interface Retired {
  number: number;
  file: string;
  size: number;
  /** When it was last written, in ms since the epoch. */
  at: number;
}

/**
 * The journal's segments that nothing pending needs any more, kept under another name
 * (`records-NNNNNNNN.ndjson`) so that the deliveries they record (with every attempt and their
 * outcomes) can still be looked up and sent again: never replayed at start, never appended to.
 * Kept for `retention.age` ms and within `retention.bytes`, an eighth of the disk, and while a
 * quarter of the disk (at most 4 GiB) is free; beyond, the oldest are deleted. On a short disk
 * (full, or its reserve spent) all of them go: nothing kept for looking back makes an acceptance wait.
 */
export class RetiredSegments {
  readonly #dir: string;
  readonly #retention: RecordRetention;
  readonly #report: Reporter;
  /** Oldest first. */
  #files: Retired[] = [];
  #trimAt = 0;

  constructor(dir: string, retention: RecordRetention, report: Reporter) {
    this.#dir = dir;
    this.#retention = retention;
    this.#report = report;
  }

  /** Whether segments are kept at all. */
  get keeping(): boolean {
    return this.#retention.age > 0 && this.#retention.bytes > 0;
  }

  /** Finds what earlier runs retired, and lets go of what is beyond the limits now. */
  async open(): Promise<void> {
    const numbers = (await readdir(this.#dir)).flatMap((name) => (NAME.test(name) ? [Number(NAME.exec(name)![1])] : [])).sort((a, b) => a - b);
    for (const number of numbers) {
      const file = recordsFile(this.#dir, number);
      const { size, mtimeMs } = await stat(file);
      this.#files.push({ number, file, size, at: mtimeMs });
    }
    await this.trim();
  }

  /** The files, oldest first, as segment numbers: a search reads them before the journal's. */
  get numbers(): number[] {
    return this.#files.map(({ number }) => number);
  }

  /** Takes a segment nothing pending is left in (or deletes it, when nothing is kept). */
  async retire(segment: Segment): Promise<void> {
    // An empty head a restart left behind records nothing.
    if (!this.keeping || segment.size === 0) return segment.remove();
    const file = recordsFile(this.#dir, segment.number);
    await segment.moveTo(file);
    this.#files.push({ number: segment.number, file, size: segment.size, at: Date.now() });
    this.#trimAt = 0;
    await this.trim();
  }

  /**
   * Deletes the oldest retired segments beyond the limits; with `short`, all of them. The age
   * is looked at once a minute at most (and at every retirement). Never throws: a failure is reported.
   */
  async trim(short = false): Promise<void> {
    const now = Date.now();
    if (this.#files.length === 0 || (!short && now < this.#trimAt)) return;
    this.#trimAt = now + TRIM_EVERY;
    try {
      const { total: disk, free: room } = await diskRoom(this.#dir);
      let free = room;
      let total = this.#files.reduce((sum, { size }) => sum + size, 0);
      const over = () => short || total > Math.min(this.#retention.bytes, disk * LOOK_BACK_SHARE) || free < freeFloor(disk);
      let removed = 0;
      while (this.#files.length > 0 && (over() || this.#files[0]!.at < now - this.#retention.age)) {
        const oldest = this.#files[0]!;
        await unlink(oldest.file).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        });
        this.#files.shift();
        total -= oldest.size;
        free += oldest.size;
        removed += 1;
      }
      if (removed > 0) log('collector: %d retired journal segment(s) deleted (retention)', removed);
    } catch (error) {
      this.#report.warn('collector: could not delete retired journal segments: %s', messageOf(error));
    }
  }
}
