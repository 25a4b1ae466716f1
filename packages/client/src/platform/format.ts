import { format } from 'node:util';

/**
 * printf-like formatting of a log line (`%s`, `%d`, `%O`, ...), as `debug` does. `format.web.ts`
 * is its twin for runtimes without `node:util`.
 */
export const formatLine: (template: string, ...args: unknown[]) => string = format;
