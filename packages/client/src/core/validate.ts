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
 * @returns `value` when it is an integer >= `min`.
 * @throws {ConfigError} naming option `name` otherwise.
 */
export function integer(name: string, value: unknown, min: number): number {
  if (!Number.isInteger(value) || (value as number) < min) {
    throw new ConfigError(name, `Expected \`${name}\` to be an integer >= ${min}, got ${describe(value)}`);
  }
  return value as number;
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
