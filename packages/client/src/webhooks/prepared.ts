import { ValidationError } from '../core/errors.js';
import { toWebhookBody, type WebhookInput, type WebhookType } from './body.js';

/**
 * A delivery fixed at acceptance: every attempt, and every run after a restart, sends exactly
 * `body`, so a receiver can de-duplicate by `messageId` and the signature never changes.
 */
export interface PreparedWebhook {
  /** The message's id (a delete's own `messageId`, else a new one): names the delivery in events. */
  messageId: string;
  type: WebhookType;
  /** A track's `event`, which URL filters look at; absent for the other types. */
  event?: string;
  /** The exact request body, serialised once. */
  body: string;
  /** When the message was accepted, in ms since the epoch: the start of its retry window. */
  receivedAt: number;
}

/**
 * Fixes what a delivery sends: the webhook body (see `toWebhookBody`) with `receivedAt`,
 * serialised once.
 * @throws {ValidationError} when the message has no webhook form or cannot be serialised (a
 * BigInt, a cycle).
 */
export function prepareWebhook(message: WebhookInput, receivedAt: number = Date.now()): PreparedWebhook {
  const body = toWebhookBody(message, { receivedAt });
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch (error) {
    throw new ValidationError('message', `Expected the message to be JSON-serialisable: ${(error as Error).message}`, { cause: error });
  }
  const messageId = body.type === 'delete' ? ownId(message) : body.messageId;
  const prepared: PreparedWebhook = { messageId, type: body.type, body: text, receivedAt };
  if (body.type === 'track') prepared.event = body.event;
  return prepared;
}

function ownId(message: WebhookInput): string {
  return typeof message.messageId === 'string' && message.messageId.length > 0 ? message.messageId : crypto.randomUUID();
}
