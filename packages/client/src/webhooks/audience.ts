import { ValidationError } from '../core/errors.js';
import type { Message } from '../core/message.js';
import { describe } from '../core/describe.js';
import { isPlainObject } from '../core/validate.js';

/**
 * An audience's membership as of one sync: give it back to the next sync. Plain JSON, so it can be
 * stored anywhere between syncs.
 */
export interface AudienceState {
  /** The audience's name, as given to {@link audienceSync}. */
  audience: string;
  /** Its members' user ids, sorted. */
  members: string[];
}

/** What one sync produced. */
export interface AudienceSyncResult {
  /** Identify messages to deliver, one per user whose membership changed (every member on a first sync). */
  messages: Message[];
  /** The membership to pass to the next sync. */
  state: AudienceState;
}

/**
 * The trait an audience sets: its name in snake_case.
 * @example audienceTrait('Power Users') // 'power_users'
 * @throws {ValidationError} when the name has no letter or digit to make a trait of.
 */
export function audienceTrait(audience: string): string {
  return traitNamed(audience, 'audience');
}

/** {@link audienceTrait}, its error naming the audience `field`: what the caller's input calls it. */
export function traitNamed(audience: string, field: string): string {
  if (typeof audience !== 'string') {
    throw new ValidationError(field, `Expected \`${field}\` to be a string, got ${describe(audience)}`);
  }
  const words = audience
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
  if (words.length === 0) {
    throw new ValidationError(field, `Expected \`${field}\` to contain a letter or digit, got ${describe(audience)}`);
  }
  return words.join('_').toLowerCase();
}

/**
 * Works out the identify calls one audience sync sends: `traits[audienceTrait(audience)]`
 * is `true` for a user who is a member and `false` for one who left. Without `previous` (the audience's
 * first sync) every member gets a call; after that only users whose membership changed.
 * @param members every current member's user id; repeats are ignored.
 * @param previous the `state` the audience's previous sync returned.
 * @throws {ValidationError} for an empty id, or a `previous` that is malformed or of another audience.
 * @example
 * const first = audienceSync('Power Users', ['u1', 'u2']);          // u1: true, u2: true
 * const next = audienceSync('Power Users', ['u2', 'u3'], first.state); // u3: true, u1: false
 */
export function audienceSync(audience: string, members: Iterable<string>, previous?: AudienceState): AudienceSyncResult {
  const trait = audienceTrait(audience);
  const current = memberSet(members, 'members');
  const before = new Set(previousMembers(audience, previous));
  const timestamp = new Date().toISOString();
  const identify = (userId: string, member: boolean): Message => ({
    type: 'identify',
    messageId: crypto.randomUUID(),
    timestamp,
    context: {},
    userId,
    traits: { [trait]: member },
  });
  const joined = [...current].filter((userId) => !before.has(userId)).map((userId) => identify(userId, true));
  const left = [...before].filter((userId) => !current.has(userId)).map((userId) => identify(userId, false));
  return { messages: [...joined, ...left], state: { audience, members: [...current].sort() } };
}

/**
 * An audience's members, each once; errors name them `field` (`members[2]`), what the caller's
 * input calls them.
 * @throws {ValidationError} for what is not an iterable of non-empty strings.
 */
export function memberSet(members: Iterable<string>, field: string): Set<string> {
  if (typeof members === 'string' || typeof (members as Partial<Iterable<string>>)?.[Symbol.iterator] !== 'function') {
    throw new ValidationError(field, `Expected \`${field}\` to be an iterable of user ids, got ${describe(members)}`);
  }
  const set = new Set<string>();
  let index = 0;
  for (const userId of members) {
    if (typeof userId !== 'string' || userId.length === 0) {
      throw new ValidationError(`${field}[${index}]`, `Expected \`${field}[${index}]\` to be a non-empty string, got ${describe(userId)}`);
    }
    set.add(userId);
    index += 1;
  }
  return set;
}

function previousMembers(audience: string, previous: AudienceState | undefined): string[] {
  if (previous === undefined) return [];
  if (!isPlainObject(previous) || !Array.isArray(previous.members) || !previous.members.every((id) => typeof id === 'string')) {
    throw new ValidationError('previous', `Expected \`previous\` to be the \`state\` of an earlier sync, got ${describe(previous)}`);
  }
  if (previous.audience !== audience) {
    throw new ValidationError(
      'previous',
      `Expected \`previous\` to be the state of audience ${describe(audience)}, got the state of ${describe(previous.audience)}`,
    );
  }
  return previous.members;
}
