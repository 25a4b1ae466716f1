// The twin of log.ts for runtimes without `debug`'s Node side (no `DEBUG` environment variable to
// read): the `logger` option is how to see the client's lines there.

interface Log {
  (template: string, ...args: unknown[]): void;
  enabled: boolean;
}

export const log: Log = Object.assign(() => undefined, { enabled: false });
