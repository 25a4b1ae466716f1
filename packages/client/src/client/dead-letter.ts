import { type FileHandle, open } from 'node:fs/promises';
import { DeadLetterError } from '../core/errors.js';
import { GroupCommit } from '../core/group-commit.js';

/**
 * Appends undelivered messages to a file, one JSON line each, in the order they are given.
 * Writes are asynchronous and coalesced: lines given while a write is in progress go in the next.
 * No file handle is held between writes, so an idle client holds nothing open.
 */
export class DeadLetterFile {
  /** Lines given while a write is in progress go together in the next one. */
  readonly #writes: GroupCommit<string>;

  /** @param onError told of each failed write; the lines of that write are lost. */
  constructor(path: string, onError: (error: DeadLetterError) => void) {
    this.#writes = new GroupCommit<string>(async (lines) => {
      try {
        const file = await open(path, 'a+');
        let size: number | undefined;
        try {
          size = (await file.stat()).size;
          // A process killed during a write leaves half a line: these start on a line of their own.
          const start = size > 0 && !(await endsLine(file, size)) ? '\n' : '';
          await file.appendFile(`${start}${lines.join('\n')}\n`);
          // close() promises the lines are kept: not only handed to the OS.
          await file.datasync();
        } catch (error) {
          // A disk that filled during the write: what it took is cut off again (shrinking needs no
          // room), so the file holds whole lines and the error counts every line not in it.
          if (size !== undefined) await file.truncate(size).catch(() => undefined);
          throw error;
        } finally {
          await file.close();
        }
      } catch (error) {
        onError(new DeadLetterError(path, lines.length, error));
      }
      return lines.map(() => undefined);
    });
  }

  /** Queues messages' JSON (each without a line break) to be appended. */
  append(lines: readonly string[]): void {
    // Never rejects: a failed write is reported to onError.
    for (const line of lines) void this.#writes.add(line);
  }

  /** Resolves once every line given so far is written and synced, or its failure reported. Never rejects. */
  flushed(): Promise<void> {
    return this.#writes.idle();
  }
}

/** Whether the file's last byte, at `size - 1`, ends a line. */
async function endsLine(file: FileHandle, size: number): Promise<boolean> {
  const last = Buffer.alloc(1);
  await file.read(last, 0, 1, size - 1);
  return last[0] === 0x0a;
}
