import { ValidationError } from '../core/errors.js';
import { DATE_STRING, isEmpty, isoOf, isoTime, type JsonObject, MAX_TIME, type Message, type MessageInput, timestampOf, validateMessage } from '../core/message.js';
import { describe } from '../core/describe.js';
import { isPlainObject } from '../core/validate.js';

/** The `type` of a webhook notification. */
export type WebhookType = 'page' | 'screen' | 'identify' | 'track' | 'alias' | 'group' | 'delete';

/** A deletion request for one user: becomes a `delete` notification. */
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
  /** The message's id, fixed when it was made: receivers de-duplicate repeated deliveries by it. */
  messageId: string;
  /** The message's anonymous id, when it has one. */
  anonymousId?: string;
  /** ISO 8601: the `timestamp` the sender gave, when the collector corrected it for the sender's clock. */
  originalTimestamp?: string;
  /** ISO 8601: when the sender sent the message, by its own clock; absent when it did not say. */
  sentAt?: string;
  /** ISO 8601: when the collector (or `deliver()`) accepted the message; absent when not given. */
  receivedAt?: string;
}

/** Body of a `page` notification. */
export interface PageBody extends VersionedBody {
  type: 'page';
  /** Absent on an anonymous-only message. */
  userId?: string;
  /** `path`, `referrer`, `title`, `url` and any others. */
  properties: JsonObject;
  name?: string;
  category?: string;
}
/** Body of a `screen` notification. */
export interface ScreenBody extends VersionedBody {
  type: 'screen';
  /** Absent on an anonymous-only message. */
  userId?: string;
  name?: string;
  properties: JsonObject;
}
/** Body of an `identify` notification, also used for audience membership. */
export interface IdentifyBody extends VersionedBody {
  type: 'identify';
  /** Absent on an anonymous-only message. */
  userId?: string;
  traits: JsonObject;
}
/** Body of a `track` notification. */
export interface TrackBody extends VersionedBody {
  type: 'track';
  /** Absent on an anonymous-only message. */
  userId?: string;
  event: string;
  properties: JsonObject;
}
/** Body of an `alias` notification: the two identities under keys with a space, and no `userId`. */
export interface AliasBody extends Omit<VersionedBody, 'anonymousId'> {
  type: 'alias';
  'Previous ID': string;
  'User ID': string;
}
/** Body of a `group` notification. */
export interface GroupBody extends VersionedBody {
  type: 'group';
  /** Absent on an anonymous-only message. */
  userId?: string;
  groupId: string;
  traits: JsonObject;
}
/** Body of a `delete` notification: exactly these three fields, no `version`. */
export interface DeleteBody {
  type: 'delete';
  userId: string;
  timestamp: string;
}

/** A webhook request body; narrow it on `type`. */
export type WebhookBody = PageBody | ScreenBody | IdentifyBody | TrackBody | AliasBody | GroupBody | DeleteBody;

/** What {@link toWebhookBody} adds that is not in the message itself. */
export interface WebhookBodyOptions {
  /** When the message was accepted; becomes `receivedAt` (a string: ISO 8601). Absent: the body has no `receivedAt`. */
  receivedAt?: Date | string | number;
}

/** Every field some webhook body has, each optional: a body as it is built, field by field. */
type BodyDraft = { -readonly [K in KeysOf<WebhookBody>]?: unknown };
/** The keys of each member of a union (`keyof` of the union itself gives only the shared ones). */
type KeysOf<T> = T extends unknown ? keyof T : never;

/** Every type a webhook body may have. */
export const WEBHOOK_TYPES: readonly WebhookType[] = ['page', 'screen', 'identify', 'track', 'alias', 'group', 'delete'];

/**
 * Turns a tracking-API message (or a deletion request) into the JSON object a webhook receives.
 * The fields the spec lists come first, in its order (`version`, `type`, `userId`, the type's
 * fields, `timestamp`, a non-empty `context`); then the message's other standard fields:
 * `messageId`, `anonymousId` when present, a page's `name` and `category`, a screen's
 * `properties`, `originalTimestamp` and `sentAt` when the message has them (strings), and
 * `receivedAt` when given. An anonymous-only message has no `userId` key. A
 * delete is exactly `type`, `userId` and `timestamp`. `integrations` is never forwarded.
 * @throws {ValidationError} for an unknown `type`, a delete without `userId`, or any field the
 * message itself gets wrong.
 * @example
 * toWebhookBody({ type: 'alias', userId: 'u2', previousId: 'u1', messageId: 'm1', ... })
 * // { version: 1, type: 'alias', 'Previous ID': 'u1', 'User ID': 'u2', timestamp: '...', messageId: 'm1' }
 */
export function toWebhookBody(message: WebhookInput, options: WebhookBodyOptions = {}): WebhookBody {
  if (!isPlainObject(message)) throw new ValidationError('message', `Expected a message object, got ${describe(message)}`);
  const type = message.type as unknown;
  if (typeof type !== 'string' || !(WEBHOOK_TYPES as readonly string[]).includes(type)) {
    throw new ValidationError('type', `Expected \`type\` to be one of ${WEBHOOK_TYPES.join(', ')}, got ${describe(type)}`);
  }
  if (type === 'delete') {
    return { type, userId: requireUserId(message.userId), timestamp: timestampOf(message.timestamp, () => new Date()) };
  }

  const m = validateMessage(message);
  // The spec's fields in its order, then the others: receivers that read a body by position (or
  // compare bytes with an older version's) see the same start. Built by assignment in that order,
  // one object: spreading a small object per optional field cost more than serialising the body.
  const body: BodyDraft = { version: 1, type: m.type };
  if (m.type === 'alias') {
    body['Previous ID'] = m.previousId;
    body['User ID'] = m.userId;
  } else if (m.userId !== undefined) body.userId = m.userId;
  switch (m.type) {
    case 'page':
      body.properties = objectOf(m.properties);
      break;
    case 'screen':
      if (m.name !== undefined) body.name = m.name;
      break;
    case 'identify':
      body.traits = objectOf(m.traits);
      break;
    case 'track':
      body.event = m.event;
      body.properties = objectOf(m.properties);
      break;
    case 'group':
      body.groupId = m.groupId;
      body.traits = objectOf(m.traits);
      break;
  }
  body.timestamp = m.timestamp;
  if (!isEmpty(m.context)) body.context = m.context;
  body.messageId = m.messageId;
  if (m.type !== 'alias' && m.anonymousId !== undefined) body.anonymousId = m.anonymousId;
  if (m.type === 'page') {
    if (m.name !== undefined) body.name = m.name;
    if (m.category !== undefined) body.category = m.category;
  }
  if (m.type === 'screen') body.properties = objectOf(m.properties);
  // The collector's times (see its "Browser and mobile sources" page) go out when the message has them.
  if (typeof m.originalTimestamp === 'string') body.originalTimestamp = m.originalTimestamp;
  if (typeof m.sentAt === 'string') body.sentAt = m.sentAt;
  if (options.receivedAt !== undefined) body.receivedAt = receivedAtOf(options.receivedAt);
  return body as WebhookBody;
}

function receivedAtOf(value: Date | string | number): string {
  return isoOf(receivedTime(value));
}

/**
 * A `receivedAt` option in ms since the epoch.
 * @throws {ValidationError} naming `receivedAt` unless it is a Date, ms or an ISO 8601 date string
 * within the dates a `Date` holds.
 */
export function receivedTime(value: Date | string | number): number {
  const time = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : typeof value === 'string' ? isoTime(value) : Number.NaN;
  if (!(Math.abs(time) <= MAX_TIME)) {
    throw new ValidationError('receivedAt', `Expected \`receivedAt\` to be a valid Date, ms since the epoch or ${DATE_STRING}, got ${describe(value)}`);
  }
  return time;
}

function requireUserId(userId: unknown): string {
  if (typeof userId === 'string' && userId.length > 0) return userId;
  throw new ValidationError('userId', `Expected \`userId\` on a delete notification to be a non-empty string, got ${describe(userId)}`);
}

/** `validateMessage` has already checked the field is a plain object when present. */
function objectOf(value: unknown): JsonObject {
  return (value as JsonObject | undefined) ?? {};
}
