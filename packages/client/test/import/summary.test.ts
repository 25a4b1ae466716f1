import { describe, expect, it } from 'vitest';
import type { ImportResult } from '../../src/import/importer.js';
import { formatSummary } from '../../src/import/summary.js';

const done: ImportResult = {
  skipped: 0,
  read: 12_000,
  sent: 11_990,
  failed: 0,
  rejected: 8,
  blank: 2,
  bytesRead: 3_000_000,
  lastSent: 12_000,
  interrupted: false,
};
const context = { input: 'events.ndjson', elapsed: 4_000, dryRun: false, rejectsPath: 'rejects.ndjson', peakRss: 96 * 1024 * 1024 };

describe('formatSummary', () => {
  it('gives the counts, rate and peak RSS, and no resume advice when every line is settled', () => {
    expect(formatSummary(done, context)).toBe(
      [
        'Import of events.ndjson finished after 4.0s: 12,000 lines.',
        '  sent            11,990',
        '  failed               0',
        '  rejected             8  see rejects.ndjson',
        '  blank                2',
        '  rate             3,000  lines/s',
        '  peak RSS      96.0 MiB',
        'Last line fully sent: 12000',
        '',
      ].join('\n'),
    );
  });

  it('tells where to resume after an interruption', () => {
    const text = formatSummary({ ...done, read: 5_000, sent: 5_000, rejected: 0, blank: 0, lastSent: 5_000, interrupted: true }, context);
    expect(text).toMatch(/^Import of events.ndjson interrupted after 4.0s: stopped reading after line 5,000\.\n/);
    expect(text).toMatch(/\nLast line fully sent: 5000\nResume with --from-line 5001; /);
  });

  it('tells where to resume when a line failed to deliver, and counts skipped lines', () => {
    const text = formatSummary({ ...done, skipped: 100, failed: 10, sent: 11_980, lastSent: 4_099 }, context);
    expect(text).toMatch(/\n {2}skipped {12}100 {2}before --from-line\n/);
    expect(text).toMatch(/\nResume with --from-line 4100; /);
  });

  it('says "valid" and "checked" in a dry run', () => {
    const text = formatSummary(done, { ...context, dryRun: true });
    expect(text).toMatch(/\n {2}valid {11}11,990\n/);
    expect(text).toMatch(/\nDry run: nothing was sent\.\nLast line fully checked: 12000\n$/);
  });
});
