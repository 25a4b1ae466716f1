import { DATE_STRING, describe, isoOf, isoTime, isPlainObject, type JsonObject, MAX_TIME, type Message } from 'batched-analytics/internal';
import { RequestError } from './http.js';

/**
 * The `context.library.name` of the libraries that run on the user's own device, whose messages
 * get the sender's address as `context.ip` (as the service does): analytics.js and the mobile
 * libraries. Server libraries send from a server, whose address is not the user's.
 */
export const CLIENT_LIBRARIES: ReadonlySet<string> = new Set([
  'analytics.js',
  'analytics-ios',
  'analytics-android',
  'analytics-react-native',
  'analytics-kotlin',
  'analytics-swift',
  'analytics-flutter',
  'analytics-xamarin',
  'analytics-unity',
]);

/** What one request tells every message it carries, taken once per request. */
export interface Arrival {
  /** When the collector received the request, in ms since the epoch. */
  receivedAt: number;
  /** The same, as ISO 8601: formatted once, not per message. */
  receivedIso: string;
  /** The sender's address: the socket's, or a trusted proxy's `X-Forwarded-For`. */
  ip: string;
  /** A batch body's `sentAt`, in ms since the epoch. */
  sentAt?: number;
}

/** What a batch body's top-level `context` and `integrations` give each of its messages. */
export interface BatchDefaults {
  context?: JsonObject;
  integrations?: JsonObject;
}

/**
 * Puts a batch's `context` and `integrations` under an item's own keys (the item's win), in the
 * freshly parsed item itself, before it is validated: the merged message is then held to the
 * message limits, so a large batch context cannot multiply memory by the batch length. An item
 * whose own field is not an object is left for validation to refuse.
 */
export function underBatch(item: unknown, defaults: BatchDefaults): void {
  if (!isPlainObject(item)) return;
  for (const key of ['context', 'integrations'] as const) {
    const given = defaults[key];
    if (given === undefined) continue;
    const own = item[key];
    if (own === undefined) item[key] = { ...given };
    else if (isPlainObject(own)) item[key] = { ...given, ...own };
  }
}

/**
 * What the collector adds to a validated message before it is stored (so the webhook, the page
 * and a replay carry the same bytes): `receivedAt`; `originalTimestamp`, the `timestamp` sent;
 * `timestamp` corrected for the sender's clock as `receivedAt - (sentAt - originalTimestamp)`
 * when there is a `sentAt` (the message's, else the batch's), else kept as sent, and `receivedAt`
 * when none was sent; `context.ip` for a client library or `context.direct`,
 * never over one the message has. Changes a few fields in place: no copy, no serialisation.
 * @param input the message as it arrived (what it sent, before validation filled in defaults).
 * @param path where the message is in the body, for errors (`batch[2]`); undefined for a single call.
 * @throws {RequestError} 400 naming `sentAt` when it is not a date, or puts the corrected time out of range.
 */
export function enrich(message: Message, input: Record<string, unknown>, arrival: Arrival, path: string | undefined): Message {
  message.receivedAt = arrival.receivedIso;
  // A batch's `sentAt` is not copied into each message: the bytes would be stored and sent once per message.
  const sentAt = input.sentAt === undefined ? arrival.sentAt : timeOf(input.sentAt, path === undefined ? 'sentAt' : `${path}.sentAt`);
  if (input.timestamp === undefined) {
    message.timestamp = arrival.receivedIso;
  } else {
    message.originalTimestamp = message.timestamp;
    if (sentAt !== undefined) message.timestamp = correctedTime(arrival.receivedAt - (sentAt - isoTime(message.timestamp)), path);
  }
  const context = message.context;
  if (context.ip === undefined && arrival.ip !== '' && (context.direct === true || fromClientLibrary(context))) context.ip = arrival.ip;
  return message;
}

/**
 * A `sentAt` as ms since the epoch.
 * @throws {RequestError} 400 naming `field` when it is not an ISO 8601 date string.
 */
export function timeOf(value: unknown, field: string): number {
  const time = typeof value === 'string' ? isoTime(value) : Number.NaN;
  if (Number.isNaN(time)) throw new RequestError(400, 'ERR_VALIDATION', `Expected \`${field}\` to be ${DATE_STRING}, got ${describe(value)}`, field);
  return time;
}

function correctedTime(time: number, path: string | undefined): string {
  if (Math.abs(time) <= MAX_TIME) return isoOf(time);
  const field = path === undefined ? 'sentAt' : `${path}.sentAt`;
  throw new RequestError(400, 'ERR_VALIDATION', `Expected \`${field}\` and \`timestamp\` to give a corrected timestamp within the dates JavaScript holds, got one out of range`, field);
}

function fromClientLibrary(context: JsonObject): boolean {
  const library = context.library;
  return isPlainObject(library) && typeof library.name === 'string' && CLIENT_LIBRARIES.has(library.name);
}
