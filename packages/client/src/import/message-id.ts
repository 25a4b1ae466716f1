import { createHash } from 'node:crypto';

/**
 * The messageId given to an imported line that has none, so that importing the same file again
 * sends the same ids and the service can de-duplicate them.
 *
 * It is the SHA-256 digest of the UTF-8 string `<line number>:<line text>` (number in decimal,
 * from 1 at the start of the file; text without its terminator), whose first 16 bytes are shaped
 * as an RFC 9562 version 8 UUID (custom): byte 6 gets version nibble `8`, byte 8 the variant bits
 * `10`. The line number is part of it so that two identical lines are two events.
 * @example
 * deriveMessageId(1, '{"type":"track"}') // a UUID like 'xxxxxxxx-xxxx-8xxx-[89ab]xxx-xxxxxxxxxxxx'
 */
export function deriveMessageId(lineNumber: number, text: string): string {
  const digest = createHash('sha256').update(`${lineNumber}:${text}`).digest();
  digest[6] = (digest[6]! & 0x0f) | 0x80;
  digest[8] = (digest[8]! & 0x3f) | 0x80;
  const hex = digest.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
