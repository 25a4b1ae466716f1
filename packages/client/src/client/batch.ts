import { allocBody, allocChunk, concatBytes, copyBytes, decodeText, encodeText, writeText } from '../platform/bytes.js';
import type { AnalyticsError } from '../core/errors.js';
import { LIMITS } from '../core/limits.js';
import type { Queue } from '../core/queue.js';

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
const NEWLINE = 0x0a;

/**
 * The queued messages' JSON as UTF-8 bytes in large off-heap chunks, first in, first out.
 * Thousands of queued strings on the V8 heap made every garbage collection copy and mark them
 * (a fifth of the call's time, and most of the peak RSS); bytes outside the heap are never
 * scanned, and a chunk is released once every message in it has been read. Each message is
 * followed by a newline: messages added one after another are then lines as the spool writes
 * them, which it writes from here without copying them first.
 */
export class MessageStore {
  /** Chunks still holding unread messages; writes go to the last, reads come from the first. */
  #chunks: Uint8Array[] = [];
  #writeAt = 0;
  #readAt = 0;
  /** A chunk read to its end, lent out piece by piece for request bodies; absent until one is. */
  #spare: Uint8Array | undefined;
  #spareAt = 0;

  /**
   * Appends a message's JSON, `bytes` long in UTF-8, and a newline; with `rest` (ASCII), the JSON
   * is `json` with its closing brace turned into a comma, then `rest` (see `SerializedMessage`). A
   * message never straddles two chunks.
   * @returns where in {@link tail} it starts: the spool writes its line (`bytes + 1`) from there.
   */
  add(json: string, bytes: number, rest?: string): number {
    let chunk = this.#chunks[this.#chunks.length - 1];
    if (chunk === undefined || chunk.length - this.#writeAt <= bytes) {
      chunk = allocChunk(Math.max(CHUNK_BYTES, bytes + 1));
      this.#chunks.push(chunk);
      this.#writeAt = 0;
    }
    const start = this.#writeAt;
    // ASCII (one byte per character) is the common case, and copying it is several times faster
    // than encoding UTF-8.
    let end = start + writeText(chunk, json, start, bytes - (rest?.length ?? 0) === json.length);
    if (rest !== undefined) {
      chunk[end - 1] = COMMA; // in place of the first part's closing brace
      end += writeText(chunk, rest, end, true);
    }
    chunk[end] = NEWLINE;
    this.#writeAt = end + 1;
    return start;
  }

  /**
   * The chunk the last message was added to. Its bytes stay as they are until they are read (a
   * chunk read to its end is lent out for request bodies), so whoever keeps a reference to a
   * message there must be done with it before the next {@link takeBatch}.
   */
  get tail(): Uint8Array {
    return this.#chunks[this.#chunks.length - 1]!;
  }

  /** Copies the oldest unread message, `bytes` long, into `target` at `at`; returns the bytes copied. */
  copyNext(bytes: number, target: Uint8Array, at: number): number {
    // Reads retrace the writes: a message that did not fit in the rest of a chunk is in the next.
    let chunk = this.#chunks[0]!;
    if (chunk.length - this.#readAt <= bytes) {
      this.#spare = this.#chunks.shift();
      this.#spareAt = 0;
      chunk = this.#chunks[0]!;
      this.#readAt = 0;
    }
    copyBytes(chunk, target, at, this.#readAt, this.#readAt + bytes);
    this.#readAt += bytes + 1;
    return bytes;
  }

  /**
   * Room for a request body: a piece of a chunk already read (bodies would otherwise allocate anew
   * while the read chunks wait for a full garbage collection to be freed), else a new buffer.
   * A piece is never lent twice.
   */
  body(bytes: number): Uint8Array {
    const spare = this.#spare;
    if (spare === undefined || spare.length - this.#spareAt < bytes) return allocBody(bytes);
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

const HEAD = encodeText('{"batch":[');
const TAIL = encodeText('],"sentAt":"');
const END = encodeText('"}');
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
): { entries: Entry[]; body: Uint8Array } {
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
  let at = copyBytes(HEAD, body, 0, 0, HEAD.length);
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) body[at++] = COMMA;
    at += store.copyNext(entries[i]!.bytes, body, at);
  }
  at += copyBytes(TAIL, body, at, 0, TAIL.length);
  at += writeText(body, iso, at, true);
  copyBytes(END, body, at, 0, END.length);
  return { entries, body };
}

/**
 * The JSON of each message in a body that {@link takeBatch} built from `entries`, in order: cut
 * from the bytes by the entries' sizes, exactly as sent.
 */
export function messagesOf(body: Uint8Array, entries: readonly Entry[]): string[] {
  let at = HEAD.length;
  return entries.map((entry) => {
    const json = decodeText(body, at, at + entry.bytes);
    at += entry.bytes + 1;
    return json;
  });
}

/** A copy of `body` with another `sentAt` (the attempt that sent the original may still hold it). */
export function withSentAt(body: Uint8Array, sentAt: Date): Uint8Array {
  const head = body.subarray(0, lastIndexOf(body, TAIL) + TAIL.length);
  return concatBytes([head, encodeText(sentAt.toISOString()), END]);
}

/** Where `pattern` last starts in `bytes`; -1 when it does not. Runs only on a retry. */
function lastIndexOf(bytes: Uint8Array, pattern: Uint8Array): number {
  search: for (let at = bytes.length - pattern.length; at >= 0; at -= 1) {
    for (let i = 0; i < pattern.length; i += 1) if (bytes[at + i] !== pattern[i]) continue search;
    return at;
  }
  return -1;
}
