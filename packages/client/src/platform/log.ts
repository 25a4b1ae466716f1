import createDebug from 'debug';

/** What the library logs with; declared here so that its published types need none of `debug`'s. */
export interface Log {
  (template: string, ...args: unknown[]): void;
  enabled: boolean;
  /** Where `debug` writes the lines (stderr); replaced by tests to read them. */
  log?: (...args: unknown[]) => unknown;
}

/** The library's logger: `DEBUG=analytics` shows queueing, flushes, responses, retries and drops. */
export const log: Log = createDebug('analytics');
