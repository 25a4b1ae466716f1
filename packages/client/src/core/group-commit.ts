interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/** Options of {@link GroupCommit}. */
export interface GroupCommitOptions {
  /**
   * How long a group waits for more items after its first, in ms, before it is flushed: fewer,
   * larger statements for writes nobody waits on. `0`: flushed at once.
   * @default 0
   */
  linger?: number;
  /** Items that end the wait early: this many waiting are flushed at once. @default Infinity */
  most?: number;
}

/**
 * Group commit, the one the journal, the PostgreSQL store and the dead letter share: one `flush` at a time, of everything added while the previous one ran (and, with
 * `linger`, while the group waited for more), so that N concurrent callers cost about one
 * statement, not N. Each `add` resolves with its item's result (`flush` returns one per item, in
 * order) or rejects with the flush that carried it.
 */
export class GroupCommit<T, R = void> {
  readonly #flush: (items: T[]) => Promise<R[]>;
  readonly #linger: number;
  readonly #most: number;
  #queue: Waiting<T, R>[] = [];
  /** The flush loop; absent while nothing is queued. */
  #running: Promise<void> | undefined;
  /** Ends the current wait for more items; absent while the loop is not waiting. */
  #endWait: (() => void) | undefined;

  constructor(flush: (items: T[]) => Promise<R[]>, options: GroupCommitOptions = {}) {
    this.#flush = flush;
    this.#linger = options.linger ?? 0;
    this.#most = options.most ?? Number.POSITIVE_INFINITY;
  }

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#queue.length >= this.#most) this.#endWait?.();
      this.#running ??= this.#drain();
    });
  }

  /** Flushes what waits for more items now, and resolves once everything added so far is flushed (or failed). */
  idle(): Promise<void> {
    this.#endWait?.();
    return this.#running ?? Promise.resolve();
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      // Not awaited without a wait: the first group of an idle group commit is flushed in the same step.
      if (this.#linger > 0 && this.#queue.length < this.#most) await this.#wait();
      const batch = this.#queue.splice(0);
      try {
        const results = await this.#flush(batch.map((waiting) => waiting.item));
        batch.forEach((waiting, index) => waiting.resolve(results[index]!));
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    // In the same synchronous step as the empty-queue check: an add from now on starts a new loop.
    this.#running = undefined;
  }

  /** Waits `linger` ms, or until `most` items wait or someone asks for idle. Does not keep the process alive. */
  #wait(): Promise<void> {
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.#endWait = undefined;
        resolve();
      };
      const timer = setTimeout(end, this.#linger);
      // Node only: elsewhere timers do not hold a process.
      (timer as { unref?: () => void }).unref?.();
      this.#endWait = end;
    });
  }
}
