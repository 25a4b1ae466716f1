import type { Analytics } from '../client/analytics.js';
import type { Callback } from '../client/events.js';
import { ValidationError } from '../core/errors.js';
import { type MessageType, messageType } from '../core/message.js';
import { describe } from '../core/describe.js';
import { isPlainObject } from '../core/validate.js';

/** A line parsed into a call of the tracking API: its type and the call's fields. */
export interface Call {
  type: MessageType;
  params: Record<string, unknown>;
}

/**
 * Parses one NDJSON line as a call: a JSON object whose `type` names the call
 * (`{"type":"track","userId":"u1","event":"Signed Up","timestamp":"..."}`). The call's own fields
 * are checked later, by the client, with the same rules as a direct call.
 * @throws {ValidationError} for invalid JSON (`ERR_INVALID_JSON`), a non-object or a bad `type`.
 */
export function parseCall(text: string): Call {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ValidationError('line', `Expected a JSON object, got invalid JSON: ${(error as Error).message}`, {
      code: 'ERR_INVALID_JSON',
      cause: error,
    });
  }
  if (!isPlainObject(value)) throw new ValidationError('line', `Expected a JSON object, got ${describe(value)}`);
  return { type: messageType(value.type), params: value };
}

/**
 * Makes the call on the client: validated and queued exactly as `analytics.track(params)` would be.
 * @throws {ValidationError} from the client when a field is invalid or the message is too large.
 */
export function send(analytics: Analytics, call: Call, callback: Callback): void {
  analytics[call.type](call.params as never, callback);
}
