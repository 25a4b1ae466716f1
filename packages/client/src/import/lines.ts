import { isUtf8 } from 'node:buffer';
import { MessageTooLargeError, ValidationError } from '../core/errors.js';

/** One line of an NDJSON input. */
export interface Line {
  /** Position in the input, from 1. */
  number: number;
  /**
   * The line's text without its terminator (`\n` or `\r\n`) and, on line 1, without a UTF-8 BOM.
   * For an oversized line, only its first `maxBytes` bytes.
   */
  text: string;
  /** Size of the line in bytes, terminator excluded. */
  bytes: number;
  /** Bytes of input consumed up to the end of this line, terminator included. */
  offset: number;
  /** Why the line cannot be a call before it is even parsed: too long, or not UTF-8. */
  problem?: ValidationError;
}

/** Bytes to split into lines: a readable stream, or any (async) iterable of chunks. */
export type Source = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

const LF = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Splits a byte stream into lines in constant memory: a line is held only up to `maxBytes` (plus
 * its terminator), so a runaway line costs no more than a valid one. Splitting on the `\n` byte is
 * safe in UTF-8, where no multi-byte character contains it.
 * @param maxBytes longest line accepted; longer lines come with a `MessageTooLargeError` problem.
 */
export async function* readLines(source: Source, maxBytes: number): AsyncGenerator<Line> {
  let parts: Buffer[] = [];
  let kept = 0;
  let size = 0;
  let last = -1;
  let number = 0;
  let offset = 0;

  const append = (part: Buffer): void => {
    if (part.length === 0) return;
    size += part.length;
    last = part[part.length - 1]!;
    // One byte more than the limit so that a trailing CR can still be told apart.
    const room = maxBytes + 1 - kept;
    if (room <= 0) return;
    const keep = part.length > room ? part.subarray(0, room) : part;
    parts.push(keep);
    kept += keep.length;
  };

  const finish = (): Line => {
    number += 1;
    let raw = parts.length === 1 ? parts[0]! : Buffer.concat(parts, kept);
    let bytes = last === CR ? size - 1 : size;
    if (number === 1 && raw.subarray(0, 3).equals(BOM)) {
      raw = raw.subarray(3);
      bytes -= 3;
    }
    parts = [];
    kept = 0;
    size = 0;
    last = -1;
    return lineOf(number, raw.subarray(0, Math.min(bytes, maxBytes)), bytes, offset, maxBytes);
  };

  for await (const chunk of source) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let end = buffer.indexOf(LF, start); end !== -1; end = buffer.indexOf(LF, start)) {
      append(buffer.subarray(start, end));
      offset += end + 1 - start;
      start = end + 1;
      yield finish();
    }
    append(buffer.subarray(start));
    offset += buffer.length - start;
  }
  if (size > 0) yield finish();
}

function lineOf(number: number, raw: Buffer, bytes: number, offset: number, maxBytes: number): Line {
  const text = raw.toString('utf8');
  if (bytes > maxBytes) return { number, text, bytes, offset, problem: new MessageTooLargeError(bytes, maxBytes) };
  if (!isUtf8(raw)) {
    return {
      number,
      text,
      bytes,
      offset,
      problem: new ValidationError('line', 'Expected the line to be valid UTF-8', { code: 'ERR_INVALID_UTF8' }),
    };
  }
  return { number, text, bytes, offset };
}
