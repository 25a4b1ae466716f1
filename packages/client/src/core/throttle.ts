/**
 * Lets one of each kind through per `interval` ms and counts the others held back meanwhile: how
 * failures are written where a long outage would otherwise write one line per failure.
 */
export class Throttle {
  readonly #interval: number;
  readonly #now: () => number;
  /** Per kind: when the last one went through, and how many were held back since. */
  readonly #kinds = new Map<string, { at: number; held: number }>();

  constructor(interval: number, now: () => number = () => Date.now()) {
    this.#interval = interval;
    this.#now = now;
  }

  /**
   * @returns how many of `kind` were held back since the last one let through, when this one goes
   * through; undefined when it is held back.
   */
  admit(kind: string): number | undefined {
    const now = this.#now();
    const last = this.#kinds.get(kind);
    if (last !== undefined && now - last.at < this.#interval) {
      last.held += 1;
      return undefined;
    }
    this.#kinds.set(kind, { at: now, held: 0 });
    return last?.held ?? 0;
  }

  /** Forgets every kind: the next of each goes through. */
  clear(): void {
    this.#kinds.clear();
  }
}
