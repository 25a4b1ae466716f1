import { readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { liveOwner, ownerText } from 'batched-analytics/internal';
import type { Reporter } from '../../config/report.js';
import { DataDirLockedError } from '../errors.js';

const LOCK = 'lock';

/**
 * Keeps a second process out of a data dir: a `lock` file holding the owner's pid and when it
 * started, taken over when that process is gone (killed: it could not remove it), even if its id
 * has been given to another process since. On a full disk the file is left empty
 * (created, it needs no room) and the journal still starts: it then keeps no one out until the next start.
 * @throws {DataDirLockedError} when a live process holds the directory.
 */
export async function lockDataDir(dir: string, report: Reporter): Promise<void> {
  const file = path.join(dir, LOCK);
  try {
    await writeLock(file, 'wx', dir, report);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // This process's own id is not another collector's: the lock is one a store of this process left
  // unclosed, or one a killed process left under the same id.
  const holder = liveOwner(await readFile(file, 'utf8').catch(() => ''));
  if (holder !== undefined && holder !== process.pid) {
    throw new DataDirLockedError(`${dir} is in use by process ${holder} (${file})`);
  }
  // Left behind by a process that was killed: take it over.
  await writeLock(file, 'w', dir, report);
}

/** Lets the data dir go; never throws (a lock left behind is taken over at the next start). */
export async function unlockDataDir(dir: string): Promise<void> {
  await unlink(path.join(dir, LOCK)).catch(() => undefined);
}

/** Writes this process's id into the lock; on a full disk the file is left empty, and it still starts. */
async function writeLock(file: string, flag: 'w' | 'wx', dir: string, report: Reporter): Promise<void> {
  try {
    await writeFile(file, ownerText(), { flag });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    await writeFile(file, '');
    report.warn('collector: the disk is full: %s holds no process id, so it keeps no other collector out of %s until the next start', file, dir);
  }
}
