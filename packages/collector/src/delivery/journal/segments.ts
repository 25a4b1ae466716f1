import { readdir } from 'node:fs/promises';
import { Segment, segmentNumbers } from './segment.js';

/** The journal's segment files in a data directory, oldest first; the last is the head, the only one appended to. */
export class Segments {
  readonly #dir: string;
  readonly #segments: Segment[] = [];

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** Opens a previous run's segments, oldest first, each handed to `replay` once opened; then starts a new head. */
  async open(replay: (segment: Segment) => Promise<void>): Promise<void> {
    const numbers = segmentNumbers(await readdir(this.#dir));
    for (const number of numbers) {
      const segment = await Segment.existing(this.#dir, number);
      this.#segments.push(segment);
      await replay(segment);
    }
    // Never appended to again: a previous run's last line may be cut short.
    this.#segments.push(await Segment.create(this.#dir, (numbers.at(-1) ?? 0) + 1));
  }

  /** Oldest first: the list itself, not a copy, so it follows rolls and retirements. */
  get all(): readonly Segment[] {
    return this.#segments;
  }

  get head(): Segment {
    return this.#segments.at(-1)!;
  }

  /** Starts a new head. */
  async roll(): Promise<void> {
    this.#segments.push(await Segment.create(this.#dir, this.head.number + 1));
  }

  /** The oldest is out of the journal (retired): it is no longer one of them. */
  dropOldest(): void {
    this.#segments.shift();
  }

  async close(): Promise<void> {
    await Promise.all(this.#segments.map((segment) => segment.close()));
  }
}
