import type { AnalyticsError } from './errors.js';
import { LIMITS } from './options.js';
import type { Queue } from './queue.js';

/**
 * A queued message: its size and who to tell about its fate. Its JSON, serialised once at the call,
 * waits in the {@link MessageStore}, in the same order as the entries in their queue.
 */
export interface Entry {
  bytes: number;
  callback: ((error?: AnalyticsError) => void) | undefined;
  /** Which `flush()` reports this message. */
  epoch: number;
}

/** Size of one store chunk: many messages each, and more than the largest message (32,000 bytes). */
const CHUNK_BYTES = 128 * 1024;

/**
 * The queued messages' JSON as UTF-8 bytes in large off-heap chunks, first in, first out.
 * Thousands of queued strings on the V8 heap made every garbage collection copy and mark them
 * (issue 3's profile: a fifth of the call's time, and most of the peak RSS); bytes in a Buffer are
 * never scanned, and a chunk is released once every message in it has been read.
 */
export class MessageStore {
  /** Chunks still holding unread messages; writes go to the last, reads come from the first. */
  #chunks: Buffer[] = [];
  #writeAt = 0;
  #readAt = 0;
  /** A chunk read to its end, lent out piece by piece for request bodies; absent until one is. */
  #spare: Buffer | undefined;
  #spareAt = 0;

  /** Appends `json`, `bytes` long in UTF-8. A message never straddles two chunks. */
  add(json: string, bytes: number): void {
    let chunk = this.#chunks[this.#chunks.length - 1];
    if (chunk === undefined || chunk.length - this.#writeAt < bytes) {
      chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, bytes));
      this.#chunks.push(chunk);
      this.#writeAt = 0;
    }
    // ASCII (one byte per character) is the common case, and copying Latin-1 is several times
    // faster than encoding UTF-8; both give the same bytes for ASCII.
    this.#writeAt += chunk.write(json, this.#writeAt, bytes === json.length ? 'latin1' : 'utf8');
  }

  /** Copies the oldest unread message, `bytes` long, into `target` at `at`; returns the bytes copied. */
  copyNext(bytes: number, target: Buffer, at: number): number {
    // Reads retrace the writes: a message that did not fit in the rest of a chunk is in the next.
    let chunk = this.#chunks[0]!;
    if (chunk.length - this.#readAt < bytes) {
      this.#spare = this.#chunks.shift();
      this.#spareAt = 0;
      chunk = this.#chunks[0]!;
      this.#readAt = 0;
    }
    chunk.copy(target, at, this.#readAt, this.#readAt + bytes);
    this.#readAt += bytes;
    return bytes;
  }

  /**
   * Room for a request body: a piece of a chunk already read (bodies would otherwise allocate anew
   * while the read chunks wait for a full garbage collection to be freed), else a new buffer.
   * A piece is never lent twice.
   */
  body(bytes: number): Buffer {
    const spare = this.#spare;
    if (spare === undefined || spare.length - this.#spareAt < bytes) return Buffer.allocUnsafe(bytes);
    this.#spareAt += bytes;
    return spare.subarray(this.#spareAt - bytes, this.#spareAt);
  }

  /** Forgets every unread message. */
  clear(): void {
    this.#spare = undefined;
    this.#chunks = [];
    this.#writeAt = 0;
    this.#readAt = 0;
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
 * Takes messages from the head of the queue for one request, at most `maxCount` and never more than
 * `LIMITS.batchBytes` once wrapped (each message is at most 32,000 bytes, so one always fits), and
 * copies their JSON out of the store into the request body `{"batch":[...],"sentAt":"..."}`: no
 * second stringify. The body's `sentAt` is `sentAt`; {@link withSentAt} renews it for a retry.
 */
export function takeBatch(
  queue: Queue<Entry>,
  store: MessageStore,
  maxCount: number,
  sentAt: Date,
): { entries: Entry[]; body: Buffer } {
  const entries: Entry[] = [];
  let bytes = ENVELOPE_BYTES - 1; // n messages need n - 1 commas
  for (let next = queue.peek(); next !== undefined && entries.length < maxCount; next = queue.peek()) {
    if (bytes + next.bytes + 1 > LIMITS.batchBytes) break;
    bytes += next.bytes + 1;
    entries.push(next);
    queue.shift();
  }
  const iso = sentAt.toISOString();
  const body = store.body(bytes - ISO_BYTES + iso.length);
  let at = HEAD.copy(body, 0);
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) body[at++] = COMMA;
    at += store.copyNext(entries[i]!.bytes, body, at);
  }
  at += TAIL.copy(body, at);
  END.copy(body, at + body.write(iso, at, 'latin1'));
  return { entries, body };
}

/**
 * The JSON of each message in a body that {@link takeBatch} built from `entries`, in order: cut
 * from the bytes by the entries' sizes, exactly as sent.
 */
export function messagesOf(body: Buffer, entries: readonly Entry[]): string[] {
  let at = HEAD.length;
  return entries.map((entry) => {
    const json = body.toString('utf8', at, at + entry.bytes);
    at += entry.bytes + 1;
    return json;
  });
}

/** A copy of `body` with another `sentAt` (the attempt that sent the original may still hold it). */
export function withSentAt(body: Buffer, sentAt: Date): Buffer {
  const head = body.subarray(0, body.lastIndexOf(TAIL) + TAIL.length);
  return Buffer.concat([head, Buffer.from(sentAt.toISOString(), 'latin1'), END]);
}
