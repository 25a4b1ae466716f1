/**
 * The client's byte handling on Node, Bun and Deno: `Buffer`, whose Latin-1 writes and native
 * copies are the fastest there. `bytes.web.ts` is its twin for runtimes without `Buffer` (the Edge
 * Runtime, Workers without `nodejs_compat`), swapped in by the `edge-light` and `workerd` builds;
 * both give the same bytes (test/bytes.test.ts runs one suite over both).
 */

/** Memory for many messages, kept outside the V8 heap where the runtime allows it. */
export function allocChunk(size: number): Uint8Array {
  return Buffer.allocUnsafeSlow(size);
}

/** Memory for one request body, filled at once by the caller. */
export function allocBody(size: number): Uint8Array {
  return Buffer.allocUnsafe(size);
}

/**
 * Writes `text` as UTF-8 into `target` at `at`; `ascii` says every character is one byte, which
 * allows a faster copy. @returns the bytes written.
 */
export function writeText(target: Uint8Array, text: string, at: number, ascii: boolean): number {
  // Buffer's own latin1Write: `write(text, at, 'latin1')` spends as long again choosing the
  // encoding as copying a message (profiled with --cpu-prof). Runtimes without it take `write`.
  if (ascii && LATIN1_WRITE) return (target as Latin1Writable).latin1Write(text, at);
  return (target as Buffer).write(text, at, ascii ? 'latin1' : 'utf8');
}

type Latin1Writable = Buffer & { latin1Write(text: string, at: number): number };
const LATIN1_WRITE = typeof (Buffer.prototype as Partial<Latin1Writable>).latin1Write === 'function';

/** Copies `source[start, end)` into `target` at `at`. @returns the bytes copied. */
export function copyBytes(source: Uint8Array, target: Uint8Array, at: number, start: number, end: number): number {
  return (source as Buffer).copy(target, at, start, end);
}

/** The length of `text` in UTF-8. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text);
}

/** `text` as UTF-8 bytes. */
export function encodeText(text: string): Uint8Array {
  return Buffer.from(text);
}

/** `bytes[start, end)` read as UTF-8. */
export function decodeText(bytes: Uint8Array, start: number, end: number): string {
  return (bytes as Buffer).toString('utf8', start, end);
}

/** The parts one after the other, in new memory. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}

/** `text`'s UTF-8 bytes in base64 (HTTP basic auth). */
export function base64(text: string): string {
  return Buffer.from(text).toString('base64');
}
