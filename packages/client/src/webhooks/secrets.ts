import { describe } from '../core/describe.js';
import { ConfigError } from '../core/errors.js';
import { isPlainObject } from '../core/validate.js';
import { SECRET_BYTES, SECRET_PREFIX, secretKey } from './standard-format.js';

/** Most secrets one scheme holds at once: the current one, the previous, and one more rotation. */
export const MAX_SECRETS = 3;

/** Standard Webhooks settings of a destination. */
export interface StandardWebhooksSettings {
  /**
   * 1 to 3 `whsec_…` secrets (`whsec_` and the base64 of 24 to 64 random bytes); every one signs,
   * so while rotating, list the new one and the previous one.
   */
  secrets: string[];
}

/**
 * `sharedSecret` as a list, the signing one first; empty when unset.
 * @param name where it is, to name it in errors.
 * @throws {ConfigError} `sharedSecret` when it is not a non-empty string or a list of 1 to 3 distinct ones.
 */
export function resolveSharedSecrets(value: unknown, name = 'sharedSecret'): readonly string[] {
  if (value === undefined) return [];
  if (typeof value === 'string' && value.length > 0) return Object.freeze([value]);
  if (Array.isArray(value)) return distinct(name, value, (secret) => typeof secret === 'string' && secret.length > 0, 'a non-empty string');
  throw new ConfigError(name, `Expected \`${name}\` to be a non-empty string or an array of 1 to ${MAX_SECRETS} of them, got ${describe(value)}`);
}

/**
 * The `whsec_…` secrets of `standardWebhooks`; empty when unset.
 * @param name where it is, to name it in errors.
 * @throws {ConfigError} naming the entry at fault, e.g. `standardWebhooks.secrets[1]`.
 */
export function resolveStandardSecrets(value: unknown, name = 'standardWebhooks'): readonly string[] {
  if (value === undefined) return [];
  if (!isPlainObject(value)) throw new ConfigError(name, `Expected \`${name}\` to be an object with \`secrets\`, got ${describe(value)}`);
  const unknown = Object.keys(value).find((key) => key !== 'secrets');
  if (unknown !== undefined) throw new ConfigError(`${name}.${unknown}`, `Expected no \`${name}.${unknown}\`: \`standardWebhooks\` has only \`secrets\``);
  const { secrets } = value;
  if (!Array.isArray(secrets)) {
    throw new ConfigError(`${name}.secrets`, `Expected \`${name}.secrets\` to be an array of 1 to ${MAX_SECRETS} secrets, got ${describe(secrets)}`);
  }
  const expected = `"${SECRET_PREFIX}" followed by the base64 of ${SECRET_BYTES.min} to ${SECRET_BYTES.max} bytes`;
  return distinct(`${name}.secrets`, secrets, isStandardSecret, expected);
}

function isStandardSecret(secret: unknown): boolean {
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) return false;
  const key = secretKey(secret);
  return key !== undefined && key.length >= SECRET_BYTES.min && key.length <= SECRET_BYTES.max;
}

/** A list of 1 to MAX_SECRETS valid, distinct secrets; the message never shows one. */
function distinct(name: string, list: unknown[], valid: (secret: unknown) => boolean, expected: string): readonly string[] {
  if (list.length < 1 || list.length > MAX_SECRETS) {
    throw new ConfigError(name, `Expected \`${name}\` to hold 1 to ${MAX_SECRETS} secrets, got ${list.length}`);
  }
  list.forEach((secret, index) => {
    const option = `${name}[${index}]`;
    if (!valid(secret)) throw new ConfigError(option, `Expected \`${option}\` to be ${expected}, got ${typeof secret === 'string' ? 'another string' : describe(secret)}`);
    if (list.indexOf(secret) !== index) throw new ConfigError(option, `Expected \`${option}\` to be listed once, got the same secret as entry ${list.indexOf(secret)}`);
  });
  return Object.freeze([...(list as string[])]);
}
