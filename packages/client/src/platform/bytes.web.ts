// The twin of bytes.ts for runtimes without `Buffer`: plain Uint8Arrays, TextEncoder and TextDecoder.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function allocChunk(size: number): Uint8Array {
  return new Uint8Array(size);
}

export function allocBody(size: number): Uint8Array {
  return new Uint8Array(size);
}

export function writeText(target: Uint8Array, text: string, at: number, ascii: boolean): number {
  if (ascii) {
    for (let i = 0; i < text.length; i += 1) target[at + i] = text.charCodeAt(i);
    return text.length;
  }
  return encoder.encodeInto(text, target.subarray(at)).written;
}

export function copyBytes(source: Uint8Array, target: Uint8Array, at: number, start: number, end: number): number {
  target.set(source.subarray(start, end), at);
  return end - start;
}

export function byteLength(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair: 4 bytes for 2 UTF-16 units.
      bytes += 2;
      i += 1;
    } else bytes += 2; // the rest of the BMP, and a lone surrogate (encoded as U+FFFD): 3 bytes
  }
  return bytes;
}

export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}

export function decodeText(bytes: Uint8Array, start: number, end: number): string {
  return decoder.decode(bytes.subarray(start, end));
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}

export function base64(text: string): string {
  let binary = '';
  for (const byte of encoder.encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
