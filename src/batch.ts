import type { AnalyticsError } from './errors.js';
import { LIMITS } from './options.js';
import type { Queue } from './queue.js';

/** A queued message: where its JSON, serialised once at the call, waits, and who to tell about its fate. */
export interface Entry {
  /** The {@link MessageStore} chunk holding the message's UTF-8 JSON at `offset`. */
  chunk: Buffer;
  offset: number;
  bytes: number;
  callback: ((error?: AnalyticsError) => void) | undefined;
  /** Which `flush()` reports this message. */
  epoch: number;
}

/** Size of one store chunk: many messages each, and more than the largest message (32,000 bytes). */
const CHUNK_BYTES = 128 * 1024;

/**
 * Where queued messages' JSON waits for its batch: UTF-8 bytes appended to large off-heap chunks.
 * Thousands of queued strings on the V8 heap made every garbage collection copy and mark them
 * (issue 3's profile: a fifth of the call's time, and most of the peak RSS); bytes in a Buffer are
 * never scanned, and a chunk is freed with the last entry that points into it.
 */
export class MessageStore {
  #chunk = Buffer.allocUnsafeSlow(0);
  #used = 0;

  /** Copies `json` (`bytes` long in UTF-8) into the store and returns its queue entry. */
  add(json: string, bytes: number, callback: Entry['callback'], epoch: number): Entry {
    if (this.#chunk.length - this.#used < bytes) {
      this.#chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, bytes));
      this.#used = 0;
    }
    const entry: Entry = { chunk: this.#chunk, offset: this.#used, bytes, callback, epoch };
    this.#used += this.#chunk.write(json, this.#used);
    return entry;
  }
}

const HEAD = Buffer.from('{"batch":[');
const TAIL = Buffer.from('],"sentAt":"');
const END = Buffer.from('"}');
const COMMA = 0x2c;
const ISO_BYTES = '2000-01-01T00:00:00.000Z'.length;
/** Bytes of a body around its messages: the wrapper plus a 24-character ISO timestamp. */
export const ENVELOPE_BYTES = HEAD.length + TAIL.length + ISO_BYTES + END.length;

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

/**
 * The request body `{"batch":[...],"sentAt":"..."}`, `bytes` long (as `takeBatch` reported), copied
 * together from the store: no second stringify, and each attempt gets its own `sentAt`.
 */
export function batchBody(entries: readonly Entry[], bytes: number, sentAt: Date): Buffer {
  const iso = sentAt.toISOString();
  const body = Buffer.allocUnsafe(bytes - ISO_BYTES + iso.length);
  let at = HEAD.copy(body, 0);
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (i > 0) body[at++] = COMMA;
    at += entry.chunk.copy(body, at, entry.offset, entry.offset + entry.bytes);
  }
  at += TAIL.copy(body, at);
  at += body.write(iso, at, 'latin1');
  END.copy(body, at);
  return body;
}
