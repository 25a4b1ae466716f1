import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './command.js';
import { integerRange } from '../core/validate.js';

/**
 * `util.parseArgs` (strict) whose errors become one-line `UsageError`s.
 * @throws {UsageError} for an unknown flag, a missing value, a value given to a boolean flag.
 */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (!code.startsWith('ERR_PARSE_ARGS')) throw error;
    // Node appends advice on `--` to some messages; the first sentence names the problem.
    throw new UsageError((error as Error).message.split('. ')[0]!.replace(/\.$/, ''));
  }
}

/**
 * Reads an integer flag.
 * @param max for a flag in ms that a timer waits, `MAX_DELAY`: a timer fires a longer wait at once.
 * @returns the value, or `undefined` when the flag was not given.
 * @throws {UsageError} unless the value is an integer >= `min` and <= `max`.
 */
export function integerFlag(flag: string, value: string | undefined, min: number, max = Number.POSITIVE_INFINITY): number | undefined {
  if (value === undefined) return undefined;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    throw new UsageError(`Expected ${flag} to be ${integerRange(min, max)}, got ${JSON.stringify(value)}`);
  }
  return number;
}
