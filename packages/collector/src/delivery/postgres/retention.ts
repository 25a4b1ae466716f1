import type { Pool } from 'pg';
import { log } from 'batched-analytics/internal';
import type { Reporter } from '../../config/report.js';

/** Rows one DELETE removes at most: short statements, so a large backlog of old rows never holds locks long. */
const SWEEP_BATCH = 5_000;

/** Deletes settled deliveries older than `$1` ms, in batches, oldest first. */
const DELETE_SETTLED = `
  DELETE FROM deliveries WHERE id IN (
    SELECT id FROM deliveries
    WHERE status <> 'pending' AND settled_at < now() - $1 * interval '1 millisecond'
    ORDER BY settled_at LIMIT $2)`;

/**
 * Deletes the message ids accepted before `$1` (ms since the epoch, by the accepting collectors'
 * clocks, as `accepted_at`), in batches, oldest first.
 */
const DELETE_MESSAGE_IDS = `
  DELETE FROM message_ids WHERE (source, message_id) IN (
    SELECT source, message_id FROM message_ids
    WHERE accepted_at < $1
    ORDER BY accepted_at LIMIT $2)`;

/** What a sweep removes: rows older than `keepFor` ms, named in the log as `what`. */
interface SweepJob {
  what: string;
  statement: string;
  /** The statement's first parameter at the time of the sweep. */
  bound: () => number;
  keepFor: number;
}

/**
 * Keeps tables from growing without bound: every `every` ms, removes the settled deliveries kept
 * longer than `keepSettledFor` (served by the partial index on `settled_at`), and the message ids
 * older than the de-duplication window (served by the index on `accepted_at`), each when it is not
 * 0. Its timer never keeps the process alive, and a failed sweep is reported and tried again at
 * the next tick: retention is housekeeping, never a reason to stop delivering.
 */
export class Sweeper {
  readonly #pool: Pool;
  readonly #jobs: SweepJob[];
  readonly #describe: (error: unknown) => string;
  readonly #report: Reporter;
  readonly #timer: NodeJS.Timeout | undefined;
  /** The sweep in progress, which `stop()` waits for. */
  #sweeping: Promise<void> | undefined;

  /** @param describe puts a failed sweep's error in words, for `report`. */
  constructor(
    pool: Pool,
    { keepSettledFor, dedupeWindow, every, describe, report }: { keepSettledFor: number; dedupeWindow: number; every: number; describe: (error: unknown) => string; report: Reporter },
  ) {
    this.#pool = pool;
    this.#describe = describe;
    this.#report = report;
    this.#jobs = [
      { what: 'settled deliveries', statement: DELETE_SETTLED, bound: () => keepSettledFor, keepFor: keepSettledFor },
      { what: 'message ids', statement: DELETE_MESSAGE_IDS, bound: () => Date.now() - dedupeWindow, keepFor: dedupeWindow },
    ].filter((job) => job.keepFor > 0);
    if (this.#jobs.length === 0) return;
    this.#timer = setInterval(() => {
      this.#sweeping ??= this.#sweep().finally(() => {
        this.#sweeping = undefined;
      });
    }, every).unref();
  }

  /** Stops the timer and waits for a sweep in progress. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping;
  }

  async #sweep(): Promise<void> {
    for (const job of this.#jobs) {
      try {
        let deleted = 0;
        let batch: number;
        // A full batch may have left more behind.
        do {
          batch = (await this.#pool.query(job.statement, [job.bound(), SWEEP_BATCH])).rowCount ?? 0;
          deleted += batch;
        } while (batch === SWEEP_BATCH);
        if (deleted > 0) log('collector: removed %d %s older than %d ms', deleted, job.what, job.keepFor);
      } catch (error) {
        this.#report.warn('collector: could not remove %s: %s', job.what, this.#describe(error));
      }
    }
  }
}
