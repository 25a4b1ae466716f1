interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: one `flush` at a time, of everything added while the previous one ran, so that N
 * concurrent callers cost about one statement, not N. Each `add` resolves with its item's result
 * (`flush` returns one per item, in order) or rejects with the flush that carried it.
 */
export class Batcher<T, R = void> {
  readonly #flush: (items: T[]) => Promise<R[]>;
  #queue: Waiting<T, R>[] = [];
  /** The flush loop; absent while nothing is queued. */
  #running: Promise<void> | undefined;

  constructor(flush: (items: T[]) => Promise<R[]>) {
    this.#flush = flush;
  }

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#running ??= this.#drain();
    });
  }

  /** Resolves once everything added so far is flushed (or failed). */
  idle(): Promise<void> {
    return this.#running ?? Promise.resolve();
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
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
}
