import { open } from 'node:fs/promises';
import { DeadLetterError } from '../core/errors.js';

/**
 * Appends undelivered messages to a file, one JSON line each, in the order they are given.
 * Writes are asynchronous and coalesced: lines given while a write is in progress go in the next.
 * No file handle is held between writes, so an idle client holds nothing open.
 */
export class DeadLetterFile {
  readonly #path: string;
  readonly #onError: (error: DeadLetterError) => void;
  /** Lines waiting for the next write. */
  #lines: string[] = [];
  /** The write loop; absent while nothing is waiting or being written. */
  #writing: Promise<void> | undefined;

  /** @param onError told of each failed write; the lines of that write are lost. */
  constructor(path: string, onError: (error: DeadLetterError) => void) {
    this.#path = path;
    this.#onError = onError;
  }

  /** Queues messages' JSON (each without a line break) to be appended. */
  append(lines: readonly string[]): void {
    if (lines.length === 0) return;
    for (const line of lines) this.#lines.push(line);
    this.#writing ??= this.#drain();
  }

  /** Resolves once every line given so far is written and synced, or its failure reported. Never rejects. */
  flushed(): Promise<void> {
    return this.#writing ?? Promise.resolve();
  }

  async #drain(): Promise<void> {
    while (this.#lines.length > 0) {
      const lines = this.#lines;
      this.#lines = [];
      try {
        const file = await open(this.#path, 'a');
        try {
          await file.appendFile(`${lines.join('\n')}\n`);
          // close() promises the lines are kept: not only handed to the OS.
          await file.datasync();
        } finally {
          await file.close();
        }
      } catch (error) {
        this.#onError(new DeadLetterError(this.#path, lines.length, error));
      }
    }
    this.#writing = undefined;
  }
}
