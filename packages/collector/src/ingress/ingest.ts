import { describe, isPlainObject, LIMITS, type Message, type MessageType, validateMessage, ValidationError } from 'batched-analytics/internal';
import { RequestError } from './http.js';

/**
 * Reads a `POST /v1/batch` body, `{ "batch": [message, ...], "sentAt"?: string }`, all or nothing.
 * @throws {RequestError} 400 naming the first field at fault, e.g. `batch[3].userId`.
 */
export function parseBatch(body: Buffer): Message[] {
  const parsed = parseJson(body);
  if (!isPlainObject(parsed) || !Array.isArray(parsed.batch)) {
    const got = isPlainObject(parsed) ? describe(parsed.batch) : describe(parsed);
    throw new RequestError(400, 'ERR_VALIDATION', `Expected a body \`{ "batch": [...] }\` with an array, got ${got}`, 'batch');
  }
  return parsed.batch.map((item: unknown, index: number) => message(item, `batch[${index}]`));
}

/**
 * Reads a single-call body (`POST /v1/track` and the like); its `type` may be left out.
 * @throws {RequestError} 400 naming the field at fault, e.g. `event`.
 */
export function parseSingle(body: Buffer, type: MessageType): Message {
  const parsed = parseJson(body);
  if (isPlainObject(parsed) && parsed.type !== undefined && parsed.type !== type) {
    throw new RequestError(400, 'ERR_VALIDATION', `Expected \`type\` to be absent or ${describe(type)} on /v1/${type}, got ${describe(parsed.type)}`, 'type');
  }
  return message(isPlainObject(parsed) ? { ...parsed, type } : parsed, undefined);
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

/** Validates one message with the client's rules, its nesting and its size limit. */
function message(input: unknown, path: string | undefined): Message {
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
    return validateMessage(input);
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
