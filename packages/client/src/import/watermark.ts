/**
 * The highest line N such that every line up to N has settled, while lines settle in any order
 * (batches are answered out of order). Holds only the settled lines above N, which the client's
 * `maxQueueSize` bounds.
 */
export class Watermark {
  #value: number;
  readonly #above = new Set<number>();

  /** @param settled the line up to which everything counts as settled already (0 for none). */
  constructor(settled: number) {
    this.#value = settled;
  }

  get value(): number {
    return this.#value;
  }

  /** Marks one line settled; each line is settled once. */
  settle(line: number): void {
    if (line !== this.#value + 1) {
      this.#above.add(line);
      return;
    }
    this.#value = line;
    while (this.#above.delete(this.#value + 1)) this.#value += 1;
  }
}
