// The journal's table of message ids: its memory bound, and what it answers.
import { describe, expect, it } from 'vitest';
import { type MessageKey, messageKey } from '../../../src/delivery/journal/message-key.js';
import { SeenTable } from '../../../src/delivery/journal/seen-table.js';

const SEED = [12345, 67890] as const;
const key = (source: string, messageId: string): MessageKey => messageKey(SEED, source, messageId, { hi: 0, lo: 0 });
const MIB = 1024 * 1024;

describe('SeenTable', () => {
  it('holds 1,000,000 ids in 32 MiB, and knows every one of them as a repeat with its time', () => {
    const table = new SeenTable();
    let recorded = 0;
    for (let n = 0; n < 1_000_000; n++) if (table.claim(key('web', `id-${n}`), 1_000 + n, 0) === undefined) recorded += 1;
    expect(recorded).toBe(1_000_000);
    expect(table.bytes).toBe(32 * MIB);
    let repeats = 0;
    for (let n = 0; n < 1_000_000; n += 1) if (table.claim(key('web', `id-${n}`), 5_000_000, 0) === 1_000 + n) repeats += 1;
    expect(repeats).toBe(1_000_000);
  });

  it('stays within its bound when the ids it holds keep expiring: their slots are reused or dropped at a rebuild', () => {
    const table = new SeenTable();
    const window = 100_000;
    // 3,000,000 ids over time, at most 100,000 of them within the window at any moment.
    for (let n = 0; n < 3_000_000; n++) table.claim(key('web', `id-${n}`), 1_000_000 + n, 1_000_000 + n - window + 1);
    expect(table.bytes).toBeLessThanOrEqual(4 * MIB);
    expect(table.claim(key('web', 'id-2999999'), 5_000_000, 5_000_000 - 10_000_000)).toBe(3_999_999);
    expect(table.claim(key('web', 'id-0'), 5_000_000, 4_000_000)).toBeUndefined();
  });

  it('tells sources apart, and ids whose concatenations are equal', () => {
    const table = new SeenTable();
    table.claim(key('web', 'a'), 10, 0);
    expect(table.claim(key('app', 'a'), 20, 0)).toBeUndefined();
    table.claim(key('ab', 'c'), 30, 0);
    expect(table.claim(key('a', 'bc'), 40, 0)).toBeUndefined();
    expect(table.claim(key('web', 'a'), 50, 0)).toBe(10);
  });

  it('forgets a claim taken back, and only that claim', () => {
    const table = new SeenTable();
    table.claim(key('web', 'kept'), 10, 0);
    table.claim(key('web', 'back'), 20, 0);
    table.forget(key('web', 'back'), 20);
    table.forget(key('web', 'kept'), 99);
    expect(table.claim(key('web', 'back'), 30, 0)).toBeUndefined();
    expect(table.claim(key('web', 'kept'), 40, 0)).toBe(10);
  });
});
