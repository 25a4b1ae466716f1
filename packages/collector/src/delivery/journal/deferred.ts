import type { AttemptRecord } from '../store.js';
import { type JournalRecord, recordLine } from './format.js';

/** A retry or a settlement: the records a failed write keeps for the next. */
export type DeferrableRecord = JournalRecord & { op: 'retry' | 'settle' };

/**
 * Bytes of attempt records (`log`) kept in memory at most while the disk has no room for them;
 * beyond, an attempt's record is let go (counted, and reported once written): a receiver down for
 * long on a full disk must not grow the collector's memory with every retry.
 */
export const DEFERRED_LOG_BYTES = 1024 * 1024;

interface Kept {
  record: DeferrableRecord;
  logBytes: number;
}

/**
 * The retries and settlements failed writes left, oldest first, one record per delivery: a
 * delivery's later record takes the place of its earlier one (its schedule or outcome is the
 * latest; the attempts of both are kept, up to {@link DEFERRED_LOG_BYTES} in all). So what waits
 * is bounded by the deliveries pending, not by how often they were retried, and is written in
 * pieces as room comes back.
 */
export class DeferredRecords {
  readonly #byId = new Map<string, Kept>();
  #logBytes = 0;
  /** Attempts let go since the last {@link takeDropped}. */
  #dropped = 0;

  get empty(): boolean {
    return this.#byId.size === 0;
  }

  add(record: DeferrableRecord): void {
    const earlier = this.#byId.get(record.id);
    const log = [...(earlier?.record.log ?? [])];
    let logBytes = earlier?.logBytes ?? 0;
    for (const attempt of record.log ?? []) {
      const bytes = attemptBytes(attempt);
      if (this.#logBytes + bytes > DEFERRED_LOG_BYTES) {
        this.#dropped += 1;
        continue;
      }
      this.#logBytes += bytes;
      logBytes += bytes;
      log.push(attempt);
    }
    const merged: DeferrableRecord = { ...record };
    if (log.length > 0) merged.log = log;
    else delete merged.log;
    this.#byId.set(record.id, { record: merged, logBytes });
  }

  /**
   * Takes the oldest records, at least one, up to about `bytes` of lines, with their lines. A
   * record whose write fails is {@link add}ed again: no other record of its delivery is left here.
   */
  take(bytes: number): { record: DeferrableRecord; line: Buffer }[] {
    const taken: { record: DeferrableRecord; line: Buffer }[] = [];
    let size = 0;
    for (const [id, kept] of this.#byId) {
      const line = recordLine(kept.record);
      if (taken.length > 0 && size + line.length > bytes) break;
      taken.push({ record: kept.record, line });
      size += line.length;
      this.#logBytes -= kept.logBytes;
      this.#byId.delete(id);
    }
    return taken;
  }

  /** How many attempts' records were let go since it was last asked, and starts counting again. */
  takeDropped(): number {
    const dropped = this.#dropped;
    this.#dropped = 0;
    return dropped;
  }
}

function attemptBytes(attempt: AttemptRecord): number {
  return JSON.stringify(attempt).length;
}
