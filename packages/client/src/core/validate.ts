import { closest } from './closest.js';
import { describe } from './describe.js';
import { ConfigError } from './errors.js';

/**
 * The path of entry `key` (`timeout`, `webhooks[0]`) inside the object at `prefix`, for an error
 * that names it where the user wrote it: `delivery.timeout`; `key` itself without a prefix.
 */
export function within(prefix: string | undefined, key: string): string {
  return prefix === undefined ? key : `${prefix}.${key}`;
}

/**
 * The longest wait a timer takes, in ms: Node and browsers hold a delay in a signed 32-bit integer
 * and fire a longer one after 1 ms instead (Node with a `TimeoutOverflowWarning`).
 */
export const MAX_DELAY = 2 ** 31 - 1;

/**
 * @returns `value` when it is an integer >= `min` (and <= `max`).
 * @throws {ConfigError} naming option `name` otherwise.
 */
export function integer(name: string, value: unknown, min: number, max = Number.POSITIVE_INFINITY): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    throw new ConfigError(name, `Expected \`${name}\` to be ${integerRange(min, max)}, got ${describe(value)}`);
  }
  return value as number;
}

/**
 * A duration in ms that a timer waits: an integer >= `min` that a timer can hold ({@link MAX_DELAY}).
 * @throws {ConfigError} naming option `name` otherwise.
 */
export function duration(name: string, value: unknown, min: number): number {
  return integer(name, value, min, MAX_DELAY);
}

/** What an integer must be, as error messages say it: `an integer >= 1 and <= 2147483647`. */
export function integerRange(min: number, max = Number.POSITIVE_INFINITY): string {
  return `an integer >= ${min}${max === Number.POSITIVE_INFINITY ? '' : ` and <= ${max}`}`;
}

/**
 * @returns `value` when it is a boolean.
 * @throws {ConfigError} naming option `name` otherwise.
 */
export function boolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') {
    throw new ConfigError(name, `Expected \`${name}\` to be a boolean, got ${describe(value)}`);
  }
  return value;
}

/**
 * @returns `value` when it is a function or undefined.
 * @throws {ConfigError} naming option `name` otherwise.
 */
export function optionalFunction<T>(name: string, value: T): T {
  if (value !== undefined && typeof value !== 'function') {
    throw new ConfigError(name, `Expected \`${name}\` to be a function, got ${describe(value)}`);
  }
  return value;
}

/**
 * @param kind what `value` must be, for the message (`an undici Dispatcher`); without it the message
 * asks for the methods alone.
 * @returns `value` when it is undefined or has a function for each of `methods`.
 * @throws {ConfigError} naming option `name` and the methods it lacks otherwise.
 */
export function optionalWithMethods<T>(name: string, value: T, methods: readonly string[], kind?: string): T {
  if (value === undefined) return value;
  const missing = methods.filter((method) => typeof (value as Record<string, unknown> | null)?.[method] !== 'function');
  if (missing.length > 0) {
    const wanted = `${methods.slice(0, -1).join(', ')} and ${methods.at(-1)} methods`;
    const expected = kind === undefined ? `have ${wanted}` : `be ${kind}, with ${wanted}`;
    throw new ConfigError(name, `Expected \`${name}\` to ${expected}, got ${describe(value)} without ${missing.join(', ')}`);
  }
  return value;
}

/** `value` as a URL when it is a string holding an absolute http or https URL; else undefined. */
export function parseHttpUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}

/** True for `{}` literals and `Object.create(null)`, false for arrays, dates, class instances. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Checks the arguments of an `on()`: one of the events `names` lists, and a function. Node's
 * EventEmitter takes any name, so a misspelt one would be a listener that is never called.
 * @throws {ConfigError} naming the unknown event (and the one likely meant), or `listener`.
 */
export function listening(names: readonly string[], type: unknown, listener: unknown): void {
  if (typeof type !== 'string' || !names.includes(type)) {
    const given = String(type);
    const meant = closest(given, names);
    const hint = meant === undefined ? `: it emits ${names.map((name) => `\`${name}\``).join(', ')}` : `: did you mean \`${meant}\`?`;
    throw new ConfigError(given, `Unknown event \`${given}\` of on()${hint}`);
  }
  if (typeof listener !== 'function') throw new ConfigError('listener', `Expected \`listener\` to be a function, got ${describe(listener)}`);
}
