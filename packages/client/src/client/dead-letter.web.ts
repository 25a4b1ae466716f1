// The twin of dead-letter.ts for runtimes without a file system (the Edge Runtime, Workers): the
// `deadLetter` option is refused when the client is made, not at the first failure. There, a
// `failed` listener receives the same messages.
import { ConfigError, type DeadLetterError } from '../core/errors.js';

export class DeadLetterFile {
  constructor(_path: string, _onError: (error: DeadLetterError) => void) {
    throw new ConfigError(
      'deadLetter',
      'Expected no `deadLetter` here: this runtime has no file system. Keep undelivered messages from a `failed` listener instead',
    );
  }

  append(_lines: readonly string[]): void {}

  flushed(): Promise<void> {
    return Promise.resolve();
  }
}
