import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { IN_CI } from './ci.js';

/** A small tmpfs mounted for a test: a disk that really fills. */
export interface Tmpfs {
  dir: string;
  /**
   * Fills the disk up to `leave` bytes free with a file, which `drain()` deletes. tmpfs counts
   * whole 4 KiB pages, so the room left is rounded down to one.
   */
  fill(leave?: number): void;
  /** Deletes what `fill` wrote. */
  drain(): void;
  unmount(): void;
}

/**
 * Mounts a tmpfs of `size` (e.g. '2m'), with an empty `data` directory in it; or the reason when this machine cannot (not
 * root, no mount): the test then skips locally, and fails under CI.
 */
export function mountTmpfs(size: string): Tmpfs | string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tmpfs-test-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const reason = `cannot mount a tmpfs (${(error as Error).message.split('\n')[0]})`;
    if (IN_CI) throw new Error(reason);
    return reason;
  }
  const filler = path.join(dir, 'filler');
  mkdirSync(path.join(dir, 'data'));
  return {
    dir,
    fill(leave = 0) {
      const { bavail, bsize } = statfsSync(dir);
      const size = Math.max(0, bavail * bsize - leave);
      // One write of what is free now: ENOSPC at the end only means it is full, as wanted.
      try {
        writeFileSync(filler, Buffer.alloc(size), { flag: 'a' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    },
    drain() {
      rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

