import { describe, expect, it } from 'vitest';
import { type Line, readLines } from '../../src/import/lines.js';

async function collect(chunks: (string | Buffer)[], maxBytes = 100): Promise<Line[]> {
  const lines: Line[] = [];
  for await (const line of readLines(chunks, maxBytes)) lines.push(line);
  return lines;
}

/** Every chunking of the input gives the same lines: one byte at a time is the worst case. */
function bytewise(text: string | Buffer): Buffer[] {
  const buffer = Buffer.from(text);
  return [...buffer].map((byte) => Buffer.from([byte]));
}

describe('readLines', () => {
  it('numbers lines from 1, with or without a final newline, LF or CRLF', async () => {
    const lines = await collect(['{"a":1}\r\n{"b":2}\n\n{"c":', '3}']);
    expect(lines.map(({ number, text, bytes, offset }) => ({ number, text, bytes, offset }))).toEqual([
      { number: 1, text: '{"a":1}', bytes: 7, offset: 9 },
      { number: 2, text: '{"b":2}', bytes: 7, offset: 17 },
      { number: 3, text: '', bytes: 0, offset: 18 },
      { number: 4, text: '{"c":3}', bytes: 7, offset: 25 },
    ]);
  });

  it('gives the same lines whatever the chunk boundaries, multi-byte characters included', async () => {
    const input = '{"name":"Zoë ☕ 🚀"}\r\nsecond\nthird\n';
    const whole = await collect([input]);
    const split = await collect(bytewise(input));
    expect(split).toEqual(whole);
    expect(split.map((line) => line.text)).toEqual(['{"name":"Zoë ☕ 🚀"}', 'second', 'third']);
  });

  it('drops a UTF-8 byte order mark at the start of the input only', async () => {
    const lines = await collect(bytewise('\uFEFF{"a":1}\n\uFEFF{"b":2}\n'));
    expect(lines[0]).toMatchObject({ text: '{"a":1}', bytes: 7 });
    expect(lines[1]!.text).toBe('\uFEFF{"b":2}');
  });

  it('flags a line over maxBytes, keeps only its start, and goes on with the next line', async () => {
    const long = 'x'.repeat(250);
    const lines = await collect(bytewise(`ok\n${long}\r\nafter\n`), 100);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatchObject({ number: 2, text: 'x'.repeat(100), bytes: 250 });
    expect(lines[1]!.problem).toMatchObject({ code: 'ERR_MESSAGE_TOO_LARGE', size: 250, limit: 100 });
    expect(lines[2]).toMatchObject({ number: 3, text: 'after' });
    expect(lines[2]!.problem).toBeUndefined();
  });

  it('accepts a line of exactly maxBytes, its CR not counted', async () => {
    const [line] = await collect([`${'y'.repeat(100)}\r\n`], 100);
    expect(line!.problem).toBeUndefined();
    expect(line!.bytes).toBe(100);
  });

  it('flags a line that is not valid UTF-8', async () => {
    const lines = await collect([Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), 'fine\n']);
    expect(lines[0]!.problem).toMatchObject({ code: 'ERR_INVALID_UTF8' });
    expect(lines[1]!.problem).toBeUndefined();
  });
});
