import { byteLength } from '../platform/bytes.js';
import { MessageTooLargeError, messageOf, ValidationError } from './errors.js';
import type { Integrations } from './integrations.js';
import { describe } from './describe.js';
import { isPlainObject, within } from './validate.js';
import { LIMITS } from './limits.js';
import { LIBRARY } from './version.js';

/** A free-form JSON object: traits, properties, context. */
export type JsonObject = Record<string, unknown>;

/** Fields every call accepts, besides who it is about. */
export interface CommonParams {
  /** Attributes of the call that are not of the user (ip, userAgent, locale ...). */
  context?: JsonObject;
  /** Destination selection: `{ All: false, Webhooks: true }`. */
  integrations?: Integrations;
  /** When the event happened (historical import); omitted means now. Normalised to ISO 8601 UTC with ms. */
  timestamp?: Date | string;
  /** De-duplication key; a random UUID when omitted. */
  messageId?: string;
}

/**
 * Who a call is about: a `userId`, an `anonymousId`, or both. A call with neither does not
 * type-check (and throws a `ValidationError` at run time, for callers without types).
 */
export type Identity = { userId: string; anonymousId?: string } | { userId?: string; anonymousId: string };

/** Fields every call but alias accepts: an {@link Identity} and the {@link CommonParams}. */
export type BaseParams = CommonParams & Identity;

export type IdentifyParams = BaseParams & {
  traits?: JsonObject;
};
// The required field comes first in the intersection: TypeScript then names it, not `anonymousId`,
// when a call leaves it out.
export type TrackParams = {
  event: string;
  properties?: JsonObject;
} & BaseParams;
export type PageParams = BaseParams & {
  name?: string;
  category?: string;
  /** Recognised keys: url, title, referrer, path; others allowed. */
  properties?: JsonObject;
};
export type ScreenParams = BaseParams & {
  name?: string;
  category?: string;
  properties?: JsonObject;
};
export type GroupParams = {
  groupId: string;
  traits?: JsonObject;
} & BaseParams;
export interface AliasParams extends CommonParams {
  userId: string;
  previousId: string;
}

/** The parameters of each call type. */
export interface ParamsByType {
  identify: IdentifyParams;
  track: TrackParams;
  page: PageParams;
  screen: ScreenParams;
  group: GroupParams;
  alias: AliasParams;
}
export type MessageType = keyof ParamsByType;

/** A call's parameters with its `type`: what the webhooks destination accepts besides a full {@link Message}. */
export type MessageInput = { [T in MessageType]: ParamsByType[T] & { type: T } }[MessageType];

/** A message as sent on the wire (and as the collector and webhooks destination receive it). */
export interface Message {
  type: MessageType;
  messageId: string;
  timestamp: string;
  context: JsonObject;
  integrations?: Integrations;
  userId?: string;
  anonymousId?: string;
  [field: string]: unknown;
}

/** A validated message with its JSON, serialised once and reused for the request body. */
export interface SerializedMessage {
  message: Message;
  /**
   * The JSON; with `rest`, its first part: the JSON is `json` with its closing brace turned into a
   * comma, then `rest` ({@link jsonOf} joins them). Written as two parts, the message is copied
   * once; joined, it would be copied into a new string first.
   */
  json: string;
  /** The JSON's last fields and closing brace, ASCII only, when `json` is only its first part. */
  rest?: string;
  /** The whole JSON's length in UTF-8. */
  bytes: number;
}

/** A serialised message's JSON as one string. */
export function jsonOf({ json, rest }: SerializedMessage): string {
  return rest === undefined ? json : `${json.slice(0, -1)},${rest}`;
}

/** Defaults merged under every call's own. */
export interface MessageDefaults {
  context: JsonObject;
  integrations: Integrations;
}

/** Every call type, in the order the README lists them. */
export const MESSAGE_TYPES: readonly MessageType[] = Object.freeze(['identify', 'track', 'page', 'screen', 'group', 'alias']);
const TYPES: ReadonlySet<string> = new Set(MESSAGE_TYPES);

/**
 * Validates a call and applies defaults: the complete message, not yet serialised.
 * @throws {ValidationError} naming the first invalid field.
 */
export function prepareMessage<T extends MessageType>(type: T, params: ParamsByType[T], defaults: MessageDefaults): Message {
  return normalize(type, params, defaults);
}

/**
 * A call validated, completed with its defaults and serialised: what {@link prepareMessage} and
 * {@link serializeMessage} give, in one step that serialises less. A call that leaves the fields
 * the client fills in to it (and has no defaults to merge) is serialised as the user gave it, with
 * those fields' JSON appended as text: the library's context is the same for every call, and
 * serialising it again each time was a fifth of the work (`npm run bench:track`).
 * @throws {ValidationError} naming the first invalid field.
 * @throws {MessageTooLargeError} when the JSON exceeds 32,000 bytes of UTF-8.
 */
export function buildMessage<T extends MessageType>(type: T, params: ParamsByType[T], defaults: MessageDefaults): SerializedMessage {
  const p = checked(type, params);
  if (
    p.type !== undefined ||
    p.messageId !== undefined ||
    p.timestamp !== undefined ||
    p.context !== undefined ||
    p.integrations !== undefined ||
    !isEmpty(defaults.context) ||
    !isEmpty(defaults.integrations)
  ) {
    return serializeMessage(complete(type, p, defaults, true));
  }
  // Before the fields below are added: the user's own, as given (and checked).
  const own = serialize(p as Message);
  const message = p as Message;
  message.type = type;
  message.messageId = crypto.randomUUID();
  message.timestamp = timestampOf(undefined);
  message.context = { library: LIBRARY };
  // The id and time are hex, digits and punctuation; the type one of six words: none needs escaping.
  const rest = `"type":"${type}","messageId":"${message.messageId}","timestamp":"${message.timestamp}",${LIBRARY_CONTEXT}}`;
  // `own` ends with a field and the closing brace, never `{}`: a call has a userId or an
  // anonymousId of its own (checked above).
  return sized(message, own, rest);
}

/** The library's context as JSON, the last field of a message the client completes. */
const LIBRARY_CONTEXT = `"context":${JSON.stringify({ library: LIBRARY })}`;

/**
 * Serialises a valid message once, for the request body.
 * @throws {ValidationError} naming a field that cannot be serialised (a BigInt, a cycle).
 * @throws {MessageTooLargeError} when the JSON exceeds 32,000 bytes of UTF-8.
 */
export function serializeMessage(message: Message): SerializedMessage {
  return sized(message, serialize(message));
}

/** @throws {MessageTooLargeError} when the JSON (`json`, then `rest` if given) exceeds 32,000 bytes of UTF-8. */
function sized(message: Message, json: string, rest?: string): SerializedMessage {
  // `rest` is ASCII: its length is its size.
  const bytes = byteLength(json) + (rest?.length ?? 0);
  if (bytes > LIMITS.messageBytes) throw new MessageTooLargeError(bytes, LIMITS.messageBytes);
  return { message, json, rest, bytes };
}

/**
 * Validates an incoming message of any type (the collector's ingestion API) and fills in what a
 * client may leave out, keeping the message's own `messageId`, `timestamp` and `context`.
 * @throws {ValidationError} naming the first invalid field.
 */
export function validateMessage(input: unknown): Message {
  if (!isPlainObject(input)) throw new ValidationError('message', `Expected a message object, got ${describe(input)}`);
  return normalize(messageType(input.type), input as never, { context: {}, integrations: {} }, false);
}

/**
 * Checks a message's `type` field.
 * @throws {ValidationError} unless it is one of identify, track, page, screen, group, alias.
 */
export function messageType(type: unknown): MessageType {
  if (typeof type !== 'string' || !TYPES.has(type)) {
    throw new ValidationError('type', `Expected \`type\` to be one of ${[...TYPES].join(', ')}, got ${describe(type)}`);
  }
  return type as MessageType;
}

function normalize(
  type: MessageType,
  params: ParamsByType[MessageType],
  defaults: MessageDefaults,
  addLibrary = true,
): Message {
  return complete(type, checked(type, params), defaults, addLibrary);
}

/** A call's own fields, as a message in the making. */
type CheckedParams = CommonParams & { userId?: string; anonymousId?: string } & Record<string, unknown>;

/**
 * A copy of a call's argument, its fields checked.
 * @throws {ValidationError} naming the first invalid field.
 */
function checked(type: MessageType, params: unknown): CheckedParams {
  // The copy becomes the message: getters and Proxy traps of the argument run here, once, and
  // everything after reads plain data.
  const p = copyOf(type, params) as CheckedParams;
  if (typeof p.toJSON === 'function') {
    // JSON.stringify would send what it returns in place of the message.
    throw new ValidationError('toJSON', `Expected the ${type} call's argument to have no \`toJSON\` method, got one`);
  }
  // Each field read by name, not `p[field]` in a loop over names: a keyed read of a varying key
  // is a generic lookup, and these checks run on every call.
  optionalString('name', p.name);
  optionalString('category', p.category);
  optionalString('messageId', p.messageId);
  if (p.messageId !== undefined && p.messageId.length > LIMITS.messageIdLength) {
    throw new ValidationError('messageId', `Expected \`messageId\` to be at most ${LIMITS.messageIdLength} characters, got ${p.messageId.length}`);
  }
  optionalString('userId', p.userId);
  optionalString('anonymousId', p.anonymousId);
  if (p.traits !== undefined) plainObjectField('traits', p.traits);
  if (p.properties !== undefined) plainObjectField('properties', p.properties);
  if (p.context !== undefined) plainObjectField('context', p.context);
  requireFields(type, p);
  if (p.integrations !== undefined) validateIntegrations('integrations', p.integrations);
  return p;
}

/**
 * Checks defaults merged under every call's own fields (the client's `context` and `integrations`
 * options) as a call's own are checked, and that they serialise: a default a call would refuse
 * fails every call, so it is refused once, where it is given.
 * @throws {ValidationError} naming the entry at fault under its field, e.g. `context.build`.
 */
export function checkDefaults(context: unknown, integrations: unknown): MessageDefaults {
  plainObjectField('context', context);
  validateIntegrations('integrations', integrations);
  serialize(context as JsonObject, 'context');
  serialize(integrations as JsonObject, 'integrations');
  return { context: context as JsonObject, integrations: integrations as Integrations };
}

/** The message a checked call makes: its type, id, time, and the defaults merged under its own. */
function complete(type: MessageType, p: CheckedParams, defaults: MessageDefaults, addLibrary: boolean): Message {
  const message = p as Message;
  message.type = type;
  message.messageId = p.messageId ?? crypto.randomUUID();
  message.timestamp = timestampOf(p.timestamp);
  try {
    // Without contexts to merge, a literal: two spreads of empty objects cost a tenth of a call.
    message.context = !addLibrary
      ? { ...p.context }
      : p.context === undefined && isEmpty(defaults.context)
        ? { library: LIBRARY }
        : { library: LIBRARY, ...defaults.context, ...p.context };
  } catch (error) {
    throw unreadableError('context', error);
  }
  if (p.integrations === undefined) {
    if (!isEmpty(defaults.integrations)) message.integrations = defaults.integrations;
  } else {
    const integrations = { ...defaults.integrations, ...p.integrations };
    if (isEmpty(integrations)) delete message.integrations;
    else message.integrations = integrations;
  }
  return message;
}

/**
 * A copy of the call's argument holding its own enumerable fields as plain data.
 * @throws {ValidationError} when it is not a plain object, or a getter or Proxy trap throws
 * (naming the field it was reading).
 */
function copyOf(type: MessageType, params: unknown): Record<string, unknown> {
  let plain: boolean;
  try {
    plain = isPlainObject(params);
  } catch (error) {
    throw unreadableError('params', error);
  }
  if (!plain) {
    throw new ValidationError('params', `Expected the ${type} call's argument to be an object, got ${describe(params)}`);
  }
  const source = params as Record<string, unknown>;
  try {
    // Object.assign, not a spread followed by more properties: V8 builds a new hidden class for
    // every such object, which made a call several times slower. The spread stays for an
    // own `__proto__` key (JSON.parse makes them), which assign would turn into a prototype.
    return Object.hasOwn(source, '__proto__') ? { ...source } : Object.assign({}, source);
  } catch (error) {
    throw unreadableError(unreadableKey(source), error);
  }
}

/** Only once reading failed: the first key whose getter (or Proxy trap) throws. */
function unreadableKey(source: Record<string, unknown>): string {
  try {
    for (const key of Object.keys(source)) {
      try {
        void source[key];
      } catch {
        return key;
      }
    }
  } catch {
    // The keys themselves cannot be listed (an `ownKeys` trap threw): the argument is at fault.
  }
  return 'params';
}

function unreadableError(field: string, error: unknown): ValidationError {
  return new ValidationError(field, `Expected \`${field}\` to be readable, got an error reading it: ${messageOf(error)}`, { cause: error });
}

function optionalString(field: string, value: unknown): void {
  if (value !== undefined && !nonEmptyString(value)) {
    throw new ValidationError(field, `Expected \`${field}\` to be a non-empty string, got ${describe(value)}`);
  }
}

function plainObjectField(field: string, value: unknown): void {
  let plain: boolean;
  let withToJSON = false;
  try {
    plain = isPlainObject(value);
    withToJSON = plain && typeof (value as JsonObject).toJSON === 'function';
  } catch (error) {
    throw unreadableError(field, error);
  }
  if (!plain) throw new ValidationError(field, `Expected \`${field}\` to be a plain object, got ${describe(value)}`);
  if (withToJSON) throw new ValidationError(field, `Expected \`${field}\` to have no \`toJSON\` method, got one`);
}

function requireFields(type: MessageType, p: Record<string, unknown>): void {
  if (type === 'alias') {
    requireString(p, 'userId', 'an alias');
    requireString(p, 'previousId', 'an alias');
    return;
  }
  if (p.userId === undefined && p.anonymousId === undefined) {
    throw new ValidationError('userId', `Expected \`userId\` or \`anonymousId\` on ${article(type)} call, got neither`);
  }
  if (type === 'track') requireString(p, 'event', 'a track');
  if (type === 'group') requireString(p, 'groupId', 'a group');
}

function requireString(p: Record<string, unknown>, field: string, call: string): void {
  if (!nonEmptyString(p[field])) {
    throw new ValidationError(field, `Expected \`${field}\` on ${call} call to be a non-empty string, got ${describe(p[field])}`);
  }
}

function validateIntegrations(field: string, integrations: unknown): void {
  plainObjectField(field, integrations);
  try {
    for (const [key, value] of Object.entries(integrations as Record<string, unknown>)) {
      if (typeof value !== 'boolean' && !isPlainObject(value)) {
        const entry = within(field, key);
        throw new ValidationError(entry, `Expected \`${entry}\` to be a boolean or an object, got ${describe(value)}`);
      }
    }
  } catch (error) {
    // A getter or Proxy trap of the map threw while it was read.
    throw error instanceof ValidationError ? error : unreadableError(field, error);
  }
}

/**
 * A call's `timestamp` as ISO 8601 UTC with milliseconds; when it is undefined, `now()`, or by
 * default the current time.
 * @throws {ValidationError} when it is neither a valid Date nor an ISO 8601 date string ({@link isoTime}).
 */
export function timestampOf(value: unknown, now?: () => Date): string {
  if (value === undefined) return now ? now().toISOString() : isoNow();
  if (typeof value === 'string' && value === lastRead) return lastReadIso;
  const time = value instanceof Date ? value.getTime() : typeof value === 'string' ? isoTime(value) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new ValidationError('timestamp', `Expected \`timestamp\` to be a valid Date or ${DATE_STRING}, got ${describe(value)}`);
  }
  const iso = new Date(time).toISOString();
  if (typeof value === 'string') {
    lastRead = value;
    lastReadIso = iso;
  }
  return iso;
}

/** What a date string must be, for the errors that refuse one. */
export const DATE_STRING = 'an ISO 8601 date string (`2026-01-31T09:30:00.000Z`, `2026-01-31T10:30:00+01:00`, `2026-01-31`)';

/**
 * The time an ISO 8601 date string names, in ms since the epoch; NaN for any other string. Taken:
 * `YYYY-MM-DD`, alone (UTC midnight) or followed by `T` or a space, `hh:mm`, optionally `:ss` and
 * a fraction (read to the ms), and `Z`, an offset (`±hh:mm`, `±hhmm`, `±hh`) or none (UTC); the
 * year may be `±YYYYYY`, as `Date#toISOString` writes the years outside 0000 to 9999. Every field
 * in its range, the day in its month, the time within the dates a `Date` holds.
 *
 * Not `Date.parse`: it takes `"1"` (2001), rolls February 31 over into March and reads a time
 * without an offset in the server's time zone, so a mistake became a wrong date, not an error.
 * Read by hand, not by a regular expression: a collector reads every message's `timestamp`.
 */
export function isoTime(text: string): number {
  const sign = text.charCodeAt(0);
  const expanded = sign === PLUS || sign === MINUS;
  let at = expanded ? 7 : 4;
  let year = expanded ? digits(text, 1, 6) : digits(text, 0, 4);
  // ISO 8601 has no negative zero year; ECMAScript refuses it too.
  if (sign === MINUS) year = year === 0 ? Number.NaN : -year;
  if (Number.isNaN(year) || text.charCodeAt(at) !== MINUS || text.charCodeAt(at + 3) !== MINUS) return Number.NaN;
  const month = digits(text, at + 1, 2);
  const day = digits(text, at + 4, 2);
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month))) return Number.NaN;
  const date = daysSinceEpoch(year, month, day) * DAY_MS;
  at += 6;
  if (at === text.length) return withinDates(date);
  const separator = text.charCodeAt(at);
  if ((separator !== UPPER_T && separator !== LOWER_T && separator !== SPACE) || text.charCodeAt(at + 3) !== COLON) return Number.NaN;
  const hour = digits(text, at + 1, 2);
  const minute = digits(text, at + 4, 2);
  if (!(hour <= 23 && minute <= 59)) return Number.NaN;
  at += 6;
  let second = 0;
  let ms = 0;
  if (text.charCodeAt(at) === COLON) {
    second = digits(text, at + 1, 2);
    if (!(second <= 59)) return Number.NaN;
    at += 3;
    if (text.charCodeAt(at) === DOT) {
      const start = ++at;
      // Digits past the third are read and dropped, as Date.parse and toISOString do.
      for (let scale = 100, c = text.charCodeAt(at); c >= ZERO && c <= NINE; c = text.charCodeAt(++at), scale = (scale / 10) | 0) {
        ms += (c - ZERO) * scale;
      }
      if (at === start) return Number.NaN;
    }
  }
  // No offset (a naive datetime, as Python's isoformat() writes one) is UTC: never the zone of the
  // machine reading it, which would move the instant with the server's TZ.
  let offset = 0;
  const zone = text.charCodeAt(at);
  if (zone === UPPER_Z || zone === LOWER_Z) {
    at += 1;
  } else if (zone === PLUS || zone === MINUS) {
    // ±hh:mm, or the basic forms ±hhmm and ±hh.
    const hours = digits(text, at + 1, 2);
    const colon = text.charCodeAt(at + 3) === COLON;
    const length = colon ? 6 : at + 3 === text.length ? 3 : 5;
    const minutes = length === 3 ? 0 : digits(text, at + (colon ? 4 : 3), 2);
    if (!(hours <= 23 && minutes <= 59)) return Number.NaN;
    offset = (zone === PLUS ? 1 : -1) * (hours * 60 + minutes) * 60_000;
    at += length;
  }
  if (at !== text.length) return Number.NaN;
  return withinDates(date + hour * 3_600_000 + minute * 60_000 + second * 1_000 + ms - offset);
}

const PLUS = '+'.charCodeAt(0);
const MINUS = '-'.charCodeAt(0);
const DOT = '.'.charCodeAt(0);
const COLON = ':'.charCodeAt(0);
const SPACE = ' '.charCodeAt(0);
const ZERO = '0'.charCodeAt(0);
const NINE = '9'.charCodeAt(0);
const UPPER_T = 'T'.charCodeAt(0);
const LOWER_T = 't'.charCodeAt(0);
const UPPER_Z = 'Z'.charCodeAt(0);
const LOWER_Z = 'z'.charCodeAt(0);
const DAY_MS = 86_400_000;

/** The `count` decimal digits at `at` as a number; NaN when any is not a digit. */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const c = text.charCodeAt(i);
    if (!(c >= ZERO && c <= NINE)) return Number.NaN;
    value = value * 10 + (c - ZERO);
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
 * `days_from_civil`). Not `Date.UTC`, which reads the years 0 to 99 as 1900 to 1999.
 */
function daysSinceEpoch(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  return era * 146_097 + yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear - 719_468;
}

function withinDates(time: number): number {
  return Math.abs(time) <= MAX_TIME ? time : Number.NaN;
}

/**
 * The last date string read and its ISO form: the messages of one batch often share their
 * millisecond, and a collector reads every one of them.
 */
let lastRead: string | undefined;
let lastReadIso = '';

/** The newest and the oldest time a `Date` holds, in ms either side of the epoch. */
export const MAX_TIME = 8.64e15;

/**
 * A time in ms since the epoch as ISO 8601, formatted once per millisecond: a busy server makes
 * many calls in one, and a collector stamps every message of a batch with the same `receivedAt`.
 * The last two are kept: the collector formats each message's corrected `timestamp` between two
 * uses of its batch's `receivedAt`, and one entry would be replaced by each in turn.
 */
export function isoOf(ms: number): string {
  if (ms === newestMs) return newestIso;
  if (ms !== olderMs) {
    // Formatted first: a time out of Date's range throws, and must not leave its ms cached.
    olderIso = new Date(ms).toISOString();
    olderMs = ms;
  }
  const iso = olderIso;
  olderMs = newestMs;
  olderIso = newestIso;
  newestMs = ms;
  newestIso = iso;
  return iso;
}
let newestMs = Number.NaN;
let newestIso = '';
let olderMs = Number.NaN;
let olderIso = '';

function isoNow(): string {
  return isoOf(Date.now());
}

/**
 * @param field where `object` is, to name its entry that cannot be serialised under it
 * (`context.build`); a message's entries are named alone (`properties`).
 * @throws {ValidationError} naming the first entry that cannot be serialised (a BigInt, a cycle).
 */
function serialize(object: JsonObject, field?: string): string {
  try {
    return JSON.stringify(object);
  } catch (error) {
    // Only on failure: find the entry that cannot be serialised, so the error can name it.
    const key = Object.keys(object).find((entry) => {
      try {
        JSON.stringify(object[entry]);
        return false;
      } catch {
        return true;
      }
    });
    const name = key === undefined ? (field ?? 'message') : within(field, key);
    throw new ValidationError(name, `Expected \`${name}\` to be JSON-serialisable: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Whether an object has no own enumerable key, without listing its keys. */
export function isEmpty(object: object): boolean {
  for (const _ in object) return false;
  return true;
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function article(type: MessageType): string {
  return type === 'identify' || type === 'alias' ? `an ${type}` : `a ${type}`;
}
