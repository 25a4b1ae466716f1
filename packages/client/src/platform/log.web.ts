// The twin of log.ts for runtimes without `debug`'s Node side (no `DEBUG` environment variable to
// read): the `logger` option is how to see the client's lines there.

import type { Log } from './log.js';

export const log: Log = Object.assign(() => undefined, { enabled: false });
