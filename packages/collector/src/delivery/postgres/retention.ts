import type { Pool } from 'pg';
import { log } from 'batched-analytics/internal';
import { report } from '../../config/report.js';

/** Rows one DELETE removes at most: short statements, so a large backlog of settled rows never holds locks long. */
const SWEEP_BATCH = 5_000;

/** Deletes settled deliveries older than `keepFor`, in batches, oldest first. @returns the rows deleted. */
const DELETE_SETTLED = `
  DELETE FROM deliveries WHERE id IN (
    SELECT id FROM deliveries
    WHERE status <> 'pending' AND settled_at < now() - $1 * interval '1 millisecond'
    ORDER BY settled_at LIMIT $2)`;

/**
 * Keeps `deliveries` from growing without bound: every `every` ms, removes the rows settled more
 * than `keepFor` ms ago (served by the partial index on `settled_at`). Its timer never keeps the
 * process alive, and a failed sweep is reported and tried again at the next tick: retention is
 * housekeeping, never a reason to stop delivering.
 */
export class SettledSweeper {
  readonly #pool: Pool;
  readonly #keepFor: number;
  readonly #describe: (error: unknown) => string;
  readonly #timer: NodeJS.Timeout;
  /** The sweep in progress, which `stop()` waits for. */
  #sweeping: Promise<void> | undefined;

  /** @param describe puts a failed sweep's error in words, for the report. */
  constructor(pool: Pool, { keepFor, every, describe }: { keepFor: number; every: number; describe: (error: unknown) => string }) {
    this.#pool = pool;
    this.#keepFor = keepFor;
    this.#describe = describe;
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
    try {
      let deleted = 0;
      let batch: number;
      // A full batch may have left more behind.
      do {
        batch = (await this.#pool.query(DELETE_SETTLED, [this.#keepFor, SWEEP_BATCH])).rowCount ?? 0;
        deleted += batch;
      } while (batch === SWEEP_BATCH);
      if (deleted > 0) log('collector: removed %d settled deliveries older than %d ms', deleted, this.#keepFor);
    } catch (error) {
      report('warn', 'collector: could not remove settled deliveries: %s', this.#describe(error));
    }
  }
}
