import { statfs } from 'node:fs/promises';

/**
 * The share of its disk each thing kept only for looking back may take at most (the page's
 * history, the journal's retired segments): the journal needs the rest for its segments and reserve.
 */
export const LOOK_BACK_SHARE = 1 / 8;

/** The most {@link freeFloor} asks to keep free, in bytes: more than a journal of millions of messages takes. */
const FLOOR_MOST = 4 * 1024 * 1024 * 1024;

/**
 * Free space, in bytes, below which nothing is kept for looking back: the disk is short, and the
 * journal's room comes first. A quarter of the disk, but never more than 4 GiB: on a large disk
 * shared with other data (a quarter of 252 GB is 63 GB) a quarter would stop the page's history
 * and the delivery records with tens of GB still free.
 */
export function freeFloor(total: number): number {
  return Math.min(total / 4, FLOOR_MOST);
}

/** The size of the disk `dir` is on and its room left for this process, in bytes. */
export async function diskRoom(dir: string): Promise<{ total: number; free: number }> {
  const { blocks, bavail, bsize } = await statfs(dir);
  return { total: blocks * bsize, free: bavail * bsize };
}

/** How long a reading of the disk's room may serve, while the disk is far from its floor, in ms. */
const READING_SERVES = 1_000;
/**
 * Free space above the floor beyond which a reading may serve for {@link READING_SERVES} ms: more
 * than the collector writes in that time at any rate it reaches (tens of MB a second). Closer to
 * the floor, every question reads the disk again.
 */
const FAR_FROM_FLOOR = 256 * 1024 * 1024;

/**
 * The room on the disk `dir` is on, for a writer that asks before every write (the page's
 * history): read again at each question near the floor, but at most once a second while far from
 * it, where reading it for every write (a `statfs` each) cost more than the write.
 */
export class DiskRoomReading {
  readonly #dir: string;
  readonly #now: () => number;
  #last: { total: number; free: number } | undefined;
  #readAt = 0;

  constructor(dir: string, now: () => number = Date.now) {
    this.#dir = dir;
    this.#now = now;
  }

  async room(): Promise<{ total: number; free: number }> {
    const last = this.#last;
    const now = this.#now();
    if (last !== undefined && now - this.#readAt < READING_SERVES && last.free - freeFloor(last.total) > FAR_FROM_FLOOR) return last;
    this.#last = await diskRoom(this.#dir);
    this.#readAt = now;
    return this.#last;
  }
}

/** Whether a write failed for want of room (a full disk, or the user's quota). */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}
