import { rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { messageOf } from 'batched-analytics/internal';
import type { Reporter } from '../../config/report.js';
import { isDiskFull } from '../disk.js';

const RESERVE = 'reserve';
/** While the disk stays full, how often setting the reserve aside again is tried (each try fills the disk). */
const RESERVE_RETRY = 1_000;

/**
 * Room on the disk kept for settlements and retries when it fills (a file, `reserve`, in the data
 * dir): spent on them so that a crash before there is room again repeats none of the deliveries
 * they record, and set aside again once there is room. Its state: `held` (its file holds the room),
 * `missing` (spent, or not yet set aside: acceptances wait for it), or `none` (none wanted, or none
 * can be had for another reason than room).
 */
export class Reserve {
  readonly #file: string;
  readonly #size: number;
  readonly #report: Reporter;
  #state: 'held' | 'missing' | 'none';
  /** No try to set it aside again before this time (ms since the epoch). */
  #againAt = 0;
  /** Spent since it was last set aside (said once it is set aside again). */
  #spent = false;

  constructor(dir: string, size: number, report: Reporter) {
    this.#file = path.join(dir, RESERVE);
    this.#size = size;
    this.#report = report;
    this.#state = size === 0 ? 'none' : 'missing';
  }

  /** Spent or not set aside yet: the disk is short, and acceptances wait. */
  get missing(): boolean {
    return this.#state === 'missing';
  }

  /** Room came back (a segment was deleted): it may be set aside again at once. */
  roomCameBack(): void {
    this.#againAt = 0;
  }

  /**
   * Sets the reserve aside, unless it is (a whole file of its size, written aside and renamed, is
   * the only kind kept). On a full disk it tries again after `RESERVE_RETRY`, or once room came
   * back; one that cannot be had for another reason than room is given up for this run (reported;
   * settlements then wait for room in memory). @returns whether acceptances may be written.
   */
  async setAside(): Promise<boolean> {
    if (this.#state !== 'missing') return true;
    if (Date.now() < this.#againAt) return false;
    try {
      if ((await stat(this.#file).catch(() => undefined))?.size !== this.#size) {
        await writeFile(`${this.#file}.tmp`, Buffer.alloc(this.#size));
        await rename(`${this.#file}.tmp`, this.#file);
      }
      this.#state = 'held';
      if (this.#spent) this.#report.warn('collector: the disk has room again: the journal reserve is set aside again');
      this.#spent = false;
      return true;
    } catch (error) {
      await unlink(`${this.#file}.tmp`).catch(() => undefined);
      if (isDiskFull(error)) {
        this.#againAt = Date.now() + RESERVE_RETRY;
        return false;
      }
      this.#state = 'none';
      this.#report.warn('collector: the journal reserve could not be set aside (settlements wait for room in memory when the disk fills): %s', messageOf(error));
      return true;
    }
  }

  /** Gives its room to the settlements a full disk refused. @returns whether there was any. */
  async spend(): Promise<boolean> {
    if (this.#state !== 'held') return false;
    try {
      await unlink(this.#file);
    } catch (error) {
      this.#report.warn('collector: the journal reserve could not be freed: %s', messageOf(error));
      return false;
    }
    this.#state = 'missing';
    this.#spent = true;
    this.#againAt = Date.now() + RESERVE_RETRY;
    this.#report.warn('collector: the disk is full: settlements are written into the room set aside for them (journal reserve); acceptances are refused until it can be set aside again');
    return true;
  }
}
