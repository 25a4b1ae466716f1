import { statfs } from 'node:fs/promises';

/**
 * The share of its disk each thing kept only for looking back may take at most (the page's
 * history, the journal's retired segments): the journal needs the rest for its segments and reserve.
 */
export const LOOK_BACK_SHARE = 1 / 8;

/**
 * Free space, as a share of the disk, below which nothing is kept for looking back: the disk is
 * short, and the journal's room comes first.
 */
export const FREE_FLOOR = 1 / 4;

/** The size of the disk `dir` is on and its room left for this process, in bytes. */
export async function diskRoom(dir: string): Promise<{ total: number; free: number }> {
  const { blocks, bavail, bsize } = await statfs(dir);
  return { total: blocks * bsize, free: bavail * bsize };
}

/** Whether a write failed for want of room (a full disk, or the user's quota). */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}
