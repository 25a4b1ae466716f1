import { once } from 'node:events';
import type { WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { finished } from 'node:stream/promises';

/** One record of the rejects file: a line that will not reach the service, and why. */
export interface Reject {
  /** The line's number in the input, from 1. */
  line: number;
  /** `rejected`: not a valid call, never sent. `failed`: sent, but the client gave up delivering it. */
  outcome: 'rejected' | 'failed';
  /**
   * The error's stable code. Rejected lines: `ERR_INVALID_JSON`, `ERR_INVALID_UTF8`,
   * `ERR_VALIDATION`, `ERR_MESSAGE_TOO_LARGE`. Lines that failed to deliver: a delivery code
   * such as `ERR_HTTP`, `ERR_NETWORK`, `ERR_TIMEOUT` or `ERR_CLOSE_TIMEOUT`.
   */
  code: string;
  /** The error's message, naming the field at fault where there is one. */
  reason: string;
  /** A rejected line as read; for a line over the size limit, its first 32,000 bytes only. */
  text?: string;
  /** The messageId a line that failed to deliver was sent with. */
  messageId?: string;
}

/** The `--rejects` file: one JSON record per line (NDJSON), written as lines are rejected or fail. */
export class RejectsFile {
  /** Where the records go. */
  readonly path: string;
  readonly #stream: WriteStream;
  #error: Error | undefined;

  private constructor(path: string, stream: WriteStream) {
    this.path = path;
    this.#stream = stream;
    this.#stream.on('error', (error) => {
      this.#error ??= error;
    });
  }

  /**
   * Creates or truncates the file, so that a missing directory or permission fails before the import starts.
   * @throws the file system's error.
   */
  static async open(path: string): Promise<RejectsFile> {
    const handle = await open(path, 'w');
    return new RejectsFile(path, handle.createWriteStream());
  }

  /**
   * Appends a record. Resolves once the file can take more, so a reader that awaits it holds no
   * growing backlog. Never rejects: a write error is kept and thrown by `close()`.
   */
  write(reject: Reject): Promise<void> {
    if (this.#error || this.#stream.write(`${JSON.stringify(reject)}\n`)) return Promise.resolve();
    return once(this.#stream, 'drain').then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * Writes what is buffered and closes the file.
   * @throws the first error met while writing.
   */
  async close(): Promise<void> {
    this.#stream.end();
    await finished(this.#stream).catch(() => undefined);
    if (this.#error) throw this.#error;
  }
}
