import { ValidationError } from '../errors.js';
import { type JsonObject, type Message, type MessageInput, timestampOf, validateMessage } from '../message.js';
import { describe, isPlainObject } from '../options.js';

/** The `type` of a webhook notification (spec §6). */
export type WebhookType = 'page' | 'screen' | 'identify' | 'track' | 'alias' | 'group' | 'delete';

/** A deletion request for one user (spec §6): becomes a `delete` notification. */
export interface DeleteNotification {
  type: 'delete';
  userId: string;
  /** When the deletion was requested; omitted means now. */
  timestamp?: Date | string;
  /** Names the notification in events and logs; it is not part of the body. */
  messageId?: string;
}

/** What {@link toWebhookBody} and `WebhookDestination.deliver()` accept. */
export type WebhookInput = Message | MessageInput | DeleteNotification;

interface VersionedBody {
  version: 1;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
  /** The message's own context, when it has a non-empty one. */
  context?: JsonObject;
}

/** Body of a `page` notification. */
export interface PageBody extends VersionedBody {
  type: 'page';
  userId: string;
  /** `path`, `referrer`, `title`, `url` and any others. */
  properties: JsonObject;
}
/** Body of a `screen` notification. */
export interface ScreenBody extends VersionedBody {
  type: 'screen';
  userId: string;
  name?: string;
}
/** Body of an `identify` notification, also used for audience membership (spec §2.3). */
export interface IdentifyBody extends VersionedBody {
  type: 'identify';
  userId: string;
  traits: JsonObject;
}
/** Body of a `track` notification. */
export interface TrackBody extends VersionedBody {
  type: 'track';
  userId: string;
  event: string;
  properties: JsonObject;
}
/** Body of an `alias` notification: the two identities under keys with a space, and no `userId`. */
export interface AliasBody extends VersionedBody {
  type: 'alias';
  'Previous ID': string;
  'User ID': string;
}
/** Body of a `group` notification. */
export interface GroupBody extends VersionedBody {
  type: 'group';
  userId: string;
  groupId: string;
  traits: JsonObject;
}
/** Body of a `delete` notification: exactly these three fields, no `version`. */
export interface DeleteBody {
  type: 'delete';
  userId: string;
  timestamp: string;
}

/** A webhook request body (spec §2.1); narrow it on `type`. */
export type WebhookBody = PageBody | ScreenBody | IdentifyBody | TrackBody | AliasBody | GroupBody | DeleteBody;

const TYPES: readonly WebhookType[] = ['page', 'screen', 'identify', 'track', 'alias', 'group', 'delete'];

/**
 * Turns a tracking-API message (or a deletion request) into the JSON object a webhook receives,
 * field for field as spec §2.1 lists them. Fields the spec does not list (`messageId`,
 * `anonymousId`, `integrations`, a page's `name` and `category`, a screen's `properties`) are not
 * forwarded; a non-empty `context` is.
 * @throws {ValidationError} for an unknown `type`, a missing `userId` (anonymous-only messages have
 * no webhook form), or any field the message itself gets wrong.
 * @example
 * toWebhookBody({ type: 'alias', userId: 'u2', previousId: 'u1', ... })
 * // { version: 1, type: 'alias', 'Previous ID': 'u1', 'User ID': 'u2', timestamp: '...' }
 */
export function toWebhookBody(message: WebhookInput): WebhookBody {
  if (!isPlainObject(message)) throw new ValidationError('message', `Expected a message object, got ${describe(message)}`);
  const type = message.type as unknown;
  if (typeof type !== 'string' || !(TYPES as readonly string[]).includes(type)) {
    throw new ValidationError('type', `Expected \`type\` to be one of ${TYPES.join(', ')}, got ${describe(type)}`);
  }
  if (type === 'delete') {
    return { type, userId: requireUserId(message.userId, type), timestamp: timestampOf(message.timestamp, () => new Date()) };
  }

  const m = validateMessage(message);
  // Spec order: version and type first, the type's fields, then timestamp and context.
  const tail = { timestamp: m.timestamp, ...(Object.keys(m.context).length > 0 ? { context: m.context } : {}) };
  if (m.type === 'alias') {
    return { version: 1, type: 'alias', 'Previous ID': m.previousId as string, 'User ID': m.userId as string, ...tail };
  }
  const userId = requireUserId(m.userId, m.type);
  switch (m.type) {
    case 'page':
      return { version: 1, type: 'page', userId, properties: objectOf(m.properties), ...tail };
    case 'screen':
      return { version: 1, type: 'screen', userId, ...(m.name === undefined ? {} : { name: m.name as string }), ...tail };
    case 'identify':
      return { version: 1, type: 'identify', userId, traits: objectOf(m.traits), ...tail };
    case 'track':
      return { version: 1, type: 'track', userId, event: m.event as string, properties: objectOf(m.properties), ...tail };
    case 'group':
      return { version: 1, type: 'group', userId, groupId: m.groupId as string, traits: objectOf(m.traits), ...tail };
  }
}

function requireUserId(userId: unknown, type: WebhookType): string {
  if (typeof userId === 'string' && userId.length > 0) return userId;
  throw new ValidationError(
    'userId',
    `Expected \`userId\` on a ${type} webhook body to be a non-empty string (spec §2.1 has no anonymous form), got ${describe(userId)}`,
  );
}

/** `validateMessage` has already checked the field is a plain object when present. */
function objectOf(value: unknown): JsonObject {
  return (value as JsonObject | undefined) ?? {};
}
