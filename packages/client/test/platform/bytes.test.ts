import { describe, expect, it } from 'vitest';
import * as node from '../../src/platform/bytes.js';
import * as web from '../../src/platform/bytes.web.js';

// One suite for both byte implementations: the web build must put the same bytes on the wire.
const TEXTS = ['', 'plain ascii {"a":1}', 'Café ☕ naïve', '😀 pairs 𝄞', 'lone \ud800 surrogate', 'x'.repeat(70_000)];

describe.each([
  ['Buffer (Node, Bun, Deno)', node],
  ['Uint8Array (Edge Runtime, Workers)', web],
] as const)('bytes with %s', (_name, bytes) => {
  it('measures and encodes text as UTF-8, lone surrogates as U+FFFD', () => {
    for (const text of TEXTS) {
      const expected = new TextEncoder().encode(text);
      expect(bytes.byteLength(text)).toBe(expected.length);
      expect([...bytes.encodeText(text)]).toEqual([...expected]);
    }
  });

  it('writes text at an offset, by the ASCII copy or by UTF-8, and reads it back', () => {
    for (const text of TEXTS) {
      const size = bytes.byteLength(text);
      const target = bytes.allocChunk(size + 3);
      expect(bytes.writeText(target, text, 3, size === text.length)).toBe(size);
      expect([...target.subarray(3)]).toEqual([...new TextEncoder().encode(text)]);
      if (!text.includes('\ud800')) expect(bytes.decodeText(target, 3, 3 + size)).toBe(text);
    }
  });

  it('copies, concatenates and encodes basic-auth credentials', () => {
    const source = bytes.encodeText('abcdef');
    const target = bytes.allocBody(4);
    expect(bytes.copyBytes(source, target, 1, 2, 5)).toBe(3);
    expect(bytes.decodeText(target, 1, 4)).toBe('cde');
    expect(bytes.decodeText(bytes.concatBytes([source, bytes.encodeText('☕')]), 0, 9)).toBe('abcdef☕');
    expect(bytes.base64('wk_é:')).toBe(btoa(String.fromCharCode(...new TextEncoder().encode('wk_é:'))));
  });
});
