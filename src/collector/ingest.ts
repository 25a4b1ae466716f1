import { ValidationError } from '../errors.js';
import { type Message, type MessageType, validateMessage } from '../message.js';
import { describe, isPlainObject, LIMITS } from '../options.js';
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
 * @throws {RequestError} 400 `ERR_INVALID_JSON` when the body is not JSON.
 */
export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new RequestError(400, 'ERR_INVALID_JSON', `Expected a JSON body: ${(error as Error).message}`);
  }
}

/** Validates one message with the client's rules and its size limit (spec §8). */
function message(input: unknown, path: string | undefined): Message {
  const bytes = Buffer.byteLength(JSON.stringify(input) ?? '');
  if (bytes > LIMITS.messageBytes) {
    const what = path === undefined ? 'the message' : `\`${path}\``;
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
