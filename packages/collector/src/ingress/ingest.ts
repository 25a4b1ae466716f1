import { describe, isPlainObject, type JsonObject, LIMITS, type Message, type MessageType, validateMessage, ValidationError } from 'batched-analytics/internal';
import { type Arrival, type BatchDefaults, enrich, timeOf, underBatch } from './enrich.js';
import { RequestError } from './http.js';

/**
 * Reads a batch body (`POST /v1/batch`, `/v1/b`, `/v1/import`), `{ "batch": [message, ...],
 * "sentAt"?, "context"?, "integrations"?, "writeKey"? }`, all or nothing, and enriches each message.
 * @throws {RequestError} 400 naming the first field at fault, e.g. `batch[3].userId`.
 */
export function parseBatch(parsed: unknown, arrival: Arrival): Message[] {
  if (!isPlainObject(parsed) || !Array.isArray(parsed.batch)) {
    const got = isPlainObject(parsed) ? describe(parsed.batch) : describe(parsed);
    throw new RequestError(400, 'ERR_VALIDATION', `Expected a body \`{ "batch": [...] }\` with an array, got ${got}`, 'batch');
  }
  const defaults = batchDefaults(parsed);
  const batched = parsed.sentAt === undefined ? arrival : { ...arrival, sentAt: timeOf(parsed.sentAt, 'sentAt') };
  return parsed.batch.map((item: unknown, index: number) => {
    underBatch(item, defaults);
    return message(item, `batch[${index}]`, batched);
  });
}

/**
 * Reads a single-call body (`POST /v1/track`, `/v1/t` and the like), whose `type` may be left out,
 * and enriches the message.
 * @throws {RequestError} 400 naming the field at fault, e.g. `event`.
 */
export function parseSingle(parsed: unknown, type: MessageType, arrival: Arrival): Message[] {
  if (isPlainObject(parsed) && parsed.type !== undefined && parsed.type !== type) {
    throw new RequestError(400, 'ERR_VALIDATION', `Expected \`type\` to be absent or ${describe(type)} on /v1/${type}, got ${describe(parsed.type)}`, 'type');
  }
  if (isPlainObject(parsed)) parsed.type = type;
  return [message(parsed, undefined, arrival)];
}

/** A batch body's own `context` and `integrations`, checked as a message's would be. */
function batchDefaults(body: Record<string, unknown>): BatchDefaults {
  const defaults: BatchDefaults = {};
  for (const key of ['context', 'integrations'] as const) {
    const value = body[key];
    if (value === undefined) continue;
    if (!isPlainObject(value)) throw new RequestError(400, 'ERR_VALIDATION', `Expected \`${key}\` to be an object, got ${describe(value)}`, key);
    defaults[key] = value as JsonObject;
  }
  for (const [name, value] of Object.entries(defaults.integrations ?? {})) {
    if (typeof value !== 'boolean' && !isPlainObject(value)) {
      throw new RequestError(400, 'ERR_VALIDATION', `Expected \`integrations.${name}\` to be a boolean or an object, got ${describe(value)}`, `integrations.${name}`);
    }
  }
  return defaults;
}

/**
 * Most levels of objects and arrays in one message, the message itself being level 1 (so
 * `properties` is 2): `JSON.stringify` overflows the stack on a deeply nested value, which used to
 * answer 500, and clients retry a 500 forever.
 */
export const MAX_DEPTH = 64;

/** Decodes strictly: a lenient decoder would store U+FFFD in place of the bytes sent. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * @throws {RequestError} 400 `ERR_INVALID_UTF8` when the body is not UTF-8, `ERR_INVALID_JSON` when
 * it is not JSON.
 */
export function parseJson(body: Buffer): unknown {
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw new RequestError(400, 'ERR_INVALID_UTF8', 'Expected a UTF-8 body: it has a byte sequence that is not UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new RequestError(400, 'ERR_INVALID_JSON', `Expected a JSON body: ${(error as Error).message}`);
  }
}

/**
 * Validates one message with the client's rules, its nesting and its size limit, then enriches it.
 * Where real clients differ from the client's rules it is lenient: analytics.js sends an anonymous
 * visitor's `userId` as null, which means none. A `writeKey` in the message (analytics.js puts it
 * there) is credentials, not data: it is dropped, not stored nor shown.
 */
function message(input: unknown, path: string | undefined, arrival: Arrival): Message {
  if (isPlainObject(input)) {
    if (input.userId === null) delete input.userId;
    delete input.writeKey;
  }
  const what = path === undefined ? 'the message' : `\`${path}\``;
  const deep = tooDeep(input);
  if (deep !== undefined) {
    const field = path === undefined ? deep : `${path}.${deep}`;
    throw new RequestError(400, 'ERR_TOO_DEEP', `Expected ${what} to nest objects and arrays at most ${MAX_DEPTH} levels deep, got deeper at \`${field}\``, field);
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(input);
  } catch (error) {
    throw new RequestError(400, 'ERR_NOT_SERIALISABLE', `Expected ${what} to be serialisable as JSON: ${(error as Error).message}`, path ?? 'message');
  }
  const bytes = Buffer.byteLength(json ?? '');
  if (bytes > LIMITS.messageBytes) {
    throw new RequestError(
      400,
      'ERR_MESSAGE_TOO_LARGE',
      `Expected ${what} to serialise to at most ${LIMITS.messageBytes} bytes, got ${bytes} bytes`,
      path ?? 'message',
    );
  }
  try {
    return enrich(validateMessage(input), input as Record<string, unknown>, arrival, path);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const field = path === undefined ? error.field : error.field === 'message' ? path : `${path}.${error.field}`;
    const text = path === undefined ? error.message : `${path}: ${error.message}`;
    throw new RequestError(400, error.code, text, field);
  }
}

/**
 * The path of the first value nested deeper than {@link MAX_DEPTH}, found without recursion (the
 * point is not to overflow the stack), named down to its fourth level; undefined when none is.
 */
function tooDeep(root: unknown): string | undefined {
  if (root === null || typeof root !== 'object') return undefined;
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: root, depth: 1, path: '' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (depth > MAX_DEPTH) return path;
    const array = Array.isArray(value);
    for (const key in value as Record<string, unknown>) {
      const child = (value as Record<string, unknown>)[key];
      if (child === null || typeof child !== 'object') continue;
      // Only the first levels are named: a path 100,000 keys long is no help in an error message.
      const next = depth > 3 ? path : array ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
      stack.push({ value: child, depth: depth + 1, path: next });
    }
  }
  return undefined;
}
