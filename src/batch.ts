import type { AnalyticsError } from './errors.js';
import { LIMITS } from './options.js';
import type { Queue } from './queue.js';

/** A queued message: its JSON, serialised once at the call, and who to tell about its fate. */
export interface Entry {
  json: string;
  bytes: number;
  callback: ((error?: AnalyticsError) => void) | undefined;
  /** Which `flush()` reports this message. */
  epoch: number;
}

const HEAD = '{"batch":[';
const TAIL = '],"sentAt":"';
const END = '"}';
/** Bytes of a body around its messages: the wrapper plus a 24-character ISO timestamp. */
export const ENVELOPE_BYTES = HEAD.length + TAIL.length + '2000-01-01T00:00:00.000Z'.length + END.length;

/**
 * Takes messages from the head of the queue for one request: at most `maxCount`, and never more
 * than `LIMITS.batchBytes` once wrapped (each message is at most 32,000 bytes, so one always fits).
 */
export function takeBatch(queue: Queue<Entry>, maxCount: number): { entries: Entry[]; bytes: number } {
  const entries: Entry[] = [];
  let bytes = ENVELOPE_BYTES - 1; // n messages need n - 1 commas
  for (let next = queue.peek(); next !== undefined && entries.length < maxCount; next = queue.peek()) {
    if (bytes + next.bytes + 1 > LIMITS.batchBytes) break;
    bytes += next.bytes + 1;
    entries.push(next);
    queue.shift();
  }
  return { entries, bytes };
}

/** Joins the messages' JSON once per batch; a retry only re-wraps them with a new `sentAt`. */
export function joinMessages(entries: readonly Entry[]): string {
  let joined = '';
  for (let i = 0; i < entries.length; i++) joined += i === 0 ? entries[i]!.json : `,${entries[i]!.json}`;
  return joined;
}

/** The request body: `{"batch":[...],"sentAt":"..."}`, built by concatenation (no second stringify). */
export function batchBody(joined: string, sentAt: Date): string {
  return HEAD + joined + TAIL + sentAt.toISOString() + END;
}
