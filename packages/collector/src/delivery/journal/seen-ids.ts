import { messageOf } from 'batched-analytics/internal';
import type { Reporter } from '../../config/report.js';
import { type MessageKey, messageKey } from './message-key.js';
import { encodeSeen, RECORD_BYTES, SeenLog } from './seen-log.js';
import { SeenTable } from './seen-table.js';
import { type Arrival, StoreUnavailableError } from '../store.js';

/** What one acceptance claimed: which arrivals were repeats, and how to end the claim. */
export interface SeenClaim {
  /** When the ids were claimed (ms since the epoch). */
  at: number;
  /** Per arrival: when its id was first accepted, when it is a repeat. */
  repeats: (number | undefined)[];
  /**
   * The acceptance is durable: its repeats may be answered, and its ids are handed to the seen
   * log, written with those of other acceptances and not waited for (a failure is reported).
   */
  commit(): void;
  /** The acceptance failed: its ids are not remembered, and the repeats waiting on them fail too. */
  abandon(error: unknown): void;
  /**
   * Resolves once the first acceptances of this claim's repeats are durable.
   * @throws {StoreUnavailableError} when one of them failed: the repeat was not recorded either.
   */
  firsts(): Promise<void>;
}

/**
 * Bytes of ids handed to the seen log and not yet written beyond which acceptances wait for it
 * (65,536 ids): what a disk slower than the arrivals leaves in memory stays bounded.
 */
const MOST_UNWRITTEN = 1024 * 1024;

/** An acceptance whose ids are claimed and not yet durable: its repeats wait for it. */
interface InFlight {
  done: Promise<void>;
}

/**
 * The journal's de-duplication: the ids of each source accepted within the window, in a
 * {@link SeenTable} in memory, rebuilt at open from the {@link SeenLog} on disk and the ids the
 * journal's own acceptances carry ({@link recover}). A claim is taken in the table at once, so of
 * two concurrent acceptances of one id only the first records it; the second waits until the first
 * is durable (the collector never answers 200 for a repeat of something that is then lost), and
 * fails with it.
 *
 * The seen log is written behind the acceptances, in groups nobody waits for: a forwarded
 * message's id is durable in the journal line that accepted it, and the journal deletes no segment
 * before {@link flush}. An id forwarded nowhere is durable only once its group is written: a crash
 * before that lets a later repeat through, which is forwarded nowhere either.
 */
export class SeenIds {
  readonly #window: number;
  readonly #table: SeenTable;
  readonly #log: SeenLog;
  readonly #report: Reporter;
  /** Acceptances in flight by the keys they claimed (see {@link inFlightName}). */
  readonly #inFlight = new Map<number, InFlight>();

  private constructor(window: number, log: SeenLog, table: SeenTable, report: Reporter) {
    this.#window = window;
    this.#report = report;
    this.#log = log;
    this.#table = table;
  }

  /** Reads the ids remembered in `dir` (which exists) within `window` ms; failures to write them go to `report`. */
  static async open(dir: string, window: number, report: Reporter): Promise<SeenIds> {
    const table = new SeenTable();
    const since = Date.now() - window + 1;
    const log = await SeenLog.open(dir, window, report, (key, at) => void table.claim(key, at, since));
    return new SeenIds(window, log, table, report);
  }

  /**
   * Remembers ids a journal line accepted at `at` (read back at open), and hands those the seen
   * log did not hold to it: they must outlive the line's segment.
   */
  recover(ids: readonly Pick<Arrival, 'source' | 'messageId'>[], at: number): void {
    const since = Date.now() - this.#window + 1;
    if (at < since) return;
    const records = Buffer.allocUnsafe(ids.length * RECORD_BYTES);
    let count = 0;
    const key: MessageKey = { hi: 0, lo: 0 };
    for (const { source, messageId } of ids) {
      messageKey(this.#log.seed, source, messageId, key);
      if (this.#table.claim(key, at, since) !== undefined) continue;
      encodeSeen(key, at, records, count * RECORD_BYTES);
      count += 1;
    }
    if (count > 0) this.#write(records.subarray(0, count * RECORD_BYTES));
  }

  /** Resolves once every id handed to the seen log so far is on disk (or its write failed, reported). */
  flush(): Promise<void> {
    return this.#log.flush();
  }

  /** Resolves at once, unless more than {@link MOST_UNWRITTEN} bytes wait for the seen log: then once they are written. */
  async paced(): Promise<void> {
    if (this.#log.unwritten > MOST_UNWRITTEN) await this.#log.flush();
  }

  /** Bytes the table in memory takes. */
  get bytes(): number {
    return this.#table.bytes;
  }

  /** Claims the arrivals' ids, accepted now. */
  claim(arrivals: readonly Arrival[]): SeenClaim {
    const at = Date.now();
    // Accepted `window` ms ago or more: forgotten.
    const since = at - this.#window + 1;
    const repeats = new Array<number | undefined>(arrivals.length);
    const records = Buffer.allocUnsafe(arrivals.length * RECORD_BYTES);
    const claimed: MessageKey[] = [];
    const waits = new Set<InFlight>();
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const mine: InFlight = { done: new Promise<void>((yes, no) => ((resolve = yes), (reject = no))) };
    // Nobody may be waiting: a failure is also thrown to the acceptance itself.
    mine.done.catch(() => undefined);
    arrivals.forEach(({ source, messageId }, index) => {
      const key = messageKey(this.#log.seed, source, messageId, { hi: 0, lo: 0 });
      const first = this.#table.claim(key, at, since);
      repeats[index] = first;
      const name = inFlightName(key);
      if (first !== undefined) {
        const earlier = this.#inFlight.get(name);
        if (earlier !== undefined && earlier !== mine) waits.add(earlier);
        return;
      }
      encodeSeen(key, at, records, claimed.length * RECORD_BYTES);
      claimed.push(key);
      this.#inFlight.set(name, mine);
    });
    const end = () => {
      for (const key of claimed) {
        const name = inFlightName(key);
        if (this.#inFlight.get(name) === mine) this.#inFlight.delete(name);
      }
    };
    return {
      at,
      repeats,
      commit: () => {
        if (claimed.length > 0) this.#write(records.subarray(0, claimed.length * RECORD_BYTES));
        end();
        resolve();
      },
      abandon: (error) => {
        for (const key of claimed) this.#table.forget(key, at);
        end();
        reject(error);
      },
      firsts: async () => {
        try {
          await Promise.all([...waits].map((wait) => wait.done));
        } catch (error) {
          throw new StoreUnavailableError(`the first acceptance of a repeated message failed: ${messageOf(error)}`, { cause: error });
        }
      },
    };
  }

  /** Appends records to the seen log, not waited for: a failure is reported. */
  #write(records: Buffer): void {
    this.#log.append(records).catch((error: unknown) => {
      this.#report.warn('collector: the ids of %d accepted message(s) could not be written: a repeat of them after a restart is delivered again: %s', records.length / RECORD_BYTES, messageOf(error));
    });
  }

  close(): Promise<void> {
    return this.#log.close();
  }
}

/**
 * A key's name among the acceptances in flight: its 53 highest bits, a number (a `hi:lo` string
 * made and hashed twice per message cost three times as much). Two ids in flight at once whose
 * keys share these bits (about one pair in 2^53) would make a repeat of one wait for the other's
 * acceptance instead of its own: the key's own collisions are about as rare (see {@link messageKey}).
 */
function inFlightName(key: MessageKey): number {
  return key.hi * 2 ** 21 + (key.lo >>> 11);
}
