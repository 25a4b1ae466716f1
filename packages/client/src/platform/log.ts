import createDebug from 'debug';

/** The library's logger: `DEBUG=analytics` shows queueing, flushes, responses, retries and drops. */
export const log = createDebug('analytics');
