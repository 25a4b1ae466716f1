import { BeforeSendError, FilteredError, messageOf } from '../core/errors.js';
import { type Message, type SerializedMessage, serializeMessage, validateMessage } from '../core/message.js';
import type { BeforeSend } from './options.js';

/** What the hooks made of a message: it, serialised, or why it is dropped. */
export type HookOutcome =
  | { kept: SerializedMessage }
  | { reason: 'filtered'; error: FilteredError }
  | { reason: 'before-send'; error: BeforeSendError };

/**
 * Runs the `beforeSend` hooks in order, each on what the one before returned, validating every
 * result like a call, then serialises what the last one kept. Never throws: a hook that throws,
 * or returns something that is not a valid message (or one over 32,000 bytes), drops the message
 * with a `BeforeSendError` whose `cause` is what went wrong, since the caller's call was valid.
 */
export function runBeforeSend(hooks: readonly BeforeSend[], message: Message): HookOutcome {
  let current = message;
  for (let index = 0; index < hooks.length; index++) {
    let returned: unknown;
    try {
      returned = hooks[index]!(current);
    } catch (error) {
      return failed(`beforeSend hook ${index} threw`, error);
    }
    if (returned === null) return { reason: 'filtered', error: new FilteredError(index) };
    try {
      current = validateMessage(returned);
    } catch (error) {
      return failed(`beforeSend hook ${index} returned an invalid message (return the message, or null to drop it)`, error);
    }
  }
  try {
    return { kept: serializeMessage(current) };
  } catch (error) {
    return failed('beforeSend hooks returned a message that cannot be sent', error);
  }
}

function failed(what: string, cause: unknown): HookOutcome {
  return { reason: 'before-send', error: new BeforeSendError(`Dropped: ${what}: ${messageOf(cause)}`, cause) };
}
