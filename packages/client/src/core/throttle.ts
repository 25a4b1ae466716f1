/** Kinds kept before those whose interval ended with nothing held back are swept out. */
const SWEEP_FROM = 256;

/**
 * Lets one of each kind through per `interval` ms and counts the others held back meanwhile: how
 * failures are written where a long outage would otherwise write one line per failure.
 */
export class Throttle {
  readonly #interval: number;
  readonly #now: () => number;
  /** Per kind: when the last one went through, and how many were held back since. */
  readonly #kinds = new Map<string, { at: number; held: number }>();
  /** Kinds are made of what a caller is about (a URL, say), which changes: this bounds them. */
  #sweepAt = SWEEP_FROM;

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
    if (last === undefined) this.#sweep(now);
    this.#kinds.set(kind, { at: now, held: 0 });
    return last?.held ?? 0;
  }

  /** In how many ms the next of `kind` goes through: 0 when it would now. */
  endsIn(kind: string): number {
    const last = this.#kinds.get(kind);
    return last === undefined ? 0 : Math.max(0, last.at + this.#interval - this.#now());
  }

  /**
   * Lets the latest of `kind` held back through now, for a caller that writes it at the end of the
   * interval rather than wait for another.
   * @returns how many were held back, that one included.
   */
  release(kind: string): number {
    const held = this.#kinds.get(kind)?.held ?? 0;
    this.#kinds.set(kind, { at: this.#now(), held: 0 });
    return held;
  }

  /** Forgets every kind: the next of each goes through. */
  clear(): void {
    this.#kinds.clear();
  }

  /** A kind whose interval ended with nothing held back is as good as never seen: forgotten. */
  #sweep(now: number): void {
    if (this.#kinds.size < this.#sweepAt) return;
    for (const [kind, { at, held }] of this.#kinds) {
      if (held === 0 && now - at >= this.#interval) this.#kinds.delete(kind);
    }
    this.#sweepAt = Math.max(SWEEP_FROM, 2 * this.#kinds.size);
  }
}
