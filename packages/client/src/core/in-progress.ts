/**
 * Work that `close()` waits for: each promise is kept while it runs, and `settled()` resolves once
 * all of those then running have ended, however they ended.
 */
export class InProgress {
  readonly #running = new Set<Promise<unknown>>();

  /** Keeps `work` until it ends; returns it as it is (its failure is still the caller's to handle). */
  track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work);
    const forget = () => this.#running.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** How many are running. */
  get size(): number {
    return this.#running.size;
  }

  /** Resolves once everything running now has ended; never rejects. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#running]);
  }
}
