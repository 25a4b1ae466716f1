import { closest } from '../core/closest.js';
import { ConfigError } from '../core/errors.js';
import { describe } from '../core/describe.js';
import { isPlainObject } from '../core/validate.js';
import { WEBHOOK_TYPES, type WebhookType } from './body.js';

/**
 * Which messages one URL takes. With `types`, only messages of a listed type; with `events`, a
 * track only when its `event` is listed. `events` alone takes tracks with a listed event and
 * nothing else (as an event-type filter of Svix or Convoy would); with both, `types` must list
 * `track`, and the other listed types go through whatever their content.
 */
export interface WebhookFilter {
  /** The message types this URL gets, e.g. `['identify', 'track']`. */
  types?: WebhookType[];
  /** The track events this URL gets, exactly as sent (case-sensitive), e.g. `['Order Completed']`. */
  events?: string[];
}

const FILTER_KEYS = ['types', 'events'];

/**
 * Validates a webhook's `filter`, naming the entry at fault.
 * @throws {ConfigError} e.g. `webhooks[1].filter.types[0]` for a type that does not exist.
 */
export function resolveFilter(filter: unknown, name: string): Readonly<WebhookFilter> {
  if (!isPlainObject(filter)) throw new ConfigError(name, `Expected \`${name}\` to be an object with \`types\`, \`events\` or both, got ${describe(filter)}`);
  const unknown = Object.keys(filter).find((key) => !FILTER_KEYS.includes(key));
  if (unknown !== undefined) {
    const near = closest(unknown, FILTER_KEYS);
    throw new ConfigError(`${name}.${unknown}`, `Expected no \`${name}.${unknown}\`: a filter has only \`types\` and \`events\`${near ? ` (did you mean \`${near}\`?)` : ''}`);
  }
  if (filter.types === undefined && filter.events === undefined) {
    throw new ConfigError(name, `Expected \`${name}\` to have \`types\`, \`events\` or both: an empty filter would take nothing`);
  }
  const resolved: WebhookFilter = {};
  if (filter.types !== undefined) {
    resolved.types = strings(filter.types, `${name}.types`) as WebhookType[];
    resolved.types.forEach((type, index) => {
      if (!(WEBHOOK_TYPES as readonly string[]).includes(type)) {
        const option = `${name}.types[${index}]`;
        throw new ConfigError(option, `Expected \`${option}\` to be one of ${WEBHOOK_TYPES.join(', ')}, got ${describe(type)}`);
      }
    });
  }
  if (filter.events !== undefined) {
    resolved.events = strings(filter.events, `${name}.events`);
    if (resolved.types !== undefined && !resolved.types.includes('track')) {
      throw new ConfigError(`${name}.events`, `Expected \`${name}.types\` to list \`track\` when \`${name}.events\` is given: only tracks have an event`);
    }
  }
  return Object.freeze(resolved);
}

/** Whether a URL with `filter` takes a message of `type` (and, for a track, `event`); no filter takes everything. */
export function filterTakes(filter: Readonly<WebhookFilter> | undefined, type: string, event: string | undefined): boolean {
  if (filter === undefined) return true;
  if (filter.types !== undefined && !(filter.types as readonly string[]).includes(type)) return false;
  if (filter.events === undefined) return true;
  if (type !== 'track') return filter.types !== undefined;
  return event !== undefined && filter.events.includes(event);
}

/** How a filter reads on the live page and in logs, e.g. `types: identify, track; events: Order Completed`. */
export function describeFilter(filter: Readonly<WebhookFilter>): string {
  const parts = [];
  if (filter.types !== undefined) parts.push(`types: ${filter.types.join(', ')}`);
  if (filter.events !== undefined) parts.push(`events: ${filter.events.join(', ')}`);
  return parts.join('; ');
}

function strings(value: unknown, name: string): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new ConfigError(name, `Expected \`${name}\` to be a non-empty array of strings, got ${Array.isArray(value) ? 'an empty array' : describe(value)}`);
  }
  value.forEach((entry, index) => {
    if (typeof entry !== 'string' || entry.length === 0) {
      throw new ConfigError(`${name}[${index}]`, `Expected \`${name}[${index}]\` to be a non-empty string, got ${describe(entry)}`);
    }
  });
  return Object.freeze([...new Set(value as string[])]) as string[];
}
