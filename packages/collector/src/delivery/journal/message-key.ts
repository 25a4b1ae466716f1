/**
 * A source's `messageId` as 64 bits (two 32-bit halves), for the journal's table of ids seen: 16
 * bytes a remembered id with its time, however long the id, where the strings would take several
 * times that. Two multiplicative lanes over the UTF-16 code units, mixed at the end (the scheme of
 * cyrb53), keyed with a seed chosen at random per data directory so that ids picked to collide in
 * one collector do not in another. Not a cryptographic hash: its collisions are rare by chance
 * (about n / 2^53 for a new id among n remembered), not impossible to construct.
 */
export interface MessageKey {
  hi: number;
  lo: number;
}

/** The seed of {@link messageKey}: two 32-bit words. */
export type KeySeed = readonly [number, number];

/** Beyond any UTF-16 code unit: where the source's name ends, so ("ab", "c") and ("a", "bc") differ. */
const SEPARATOR = 0x10000;

/** The key of `messageId` in `source`, written into `into` (reused: one key per message, no allocation). */
export function messageKey(seed: KeySeed, source: string, messageId: string, into: MessageKey): MessageKey {
  let h1 = 0xdeadbeef ^ seed[0];
  let h2 = 0x41c6ce57 ^ seed[1];
  for (let i = 0; i < source.length; i++) {
    const unit = source.charCodeAt(i);
    h1 = Math.imul(h1 ^ unit, 2654435761);
    h2 = Math.imul(h2 ^ unit, 1597334677);
  }
  h1 = Math.imul(h1 ^ (SEPARATOR + source.length), 2654435761);
  h2 = Math.imul(h2 ^ (SEPARATOR + source.length), 1597334677);
  for (let i = 0; i < messageId.length; i++) {
    const unit = messageId.charCodeAt(i);
    h1 = Math.imul(h1 ^ unit, 2654435761);
    h2 = Math.imul(h2 ^ unit, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  into.hi = h2 >>> 0;
  into.lo = h1 >>> 0;
  return into;
}
