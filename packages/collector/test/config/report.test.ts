// The collector's warnings and errors: rate-limited per reporter, so that one part (or one embedded
// collector) never holds back another's lines.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REPORT_INTERVAL, Reporter } from '../../src/config/report.js';
import { recordingLogger } from '../observe/recording-logger.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('Reporter', () => {
  it('writes the same line once per interval, counting the ones held back into the next, and each part keeps its own count', () => {
    vi.useFakeTimers();
    const logger = recordingLogger();
    const journal = new Reporter(logger).child('journal');
    const deliverer = new Reporter(logger).child('deliverer');
    for (let i = 0; i < 3; i += 1) journal.warn('collector: the disk is full (%d)', i);
    deliverer.warn('collector: the disk is full (%d)', 9);
    journal.error({ source: 'web' }, 'collector: %s failed', 'a write');
    vi.advanceTimersByTime(REPORT_INTERVAL);
    journal.warn('collector: the disk is full (%d)', 3);

    expect(logger.lines).toEqual([
      { level: 'warn', part: 'journal', fields: {}, msg: 'collector: the disk is full (0)' },
      { level: 'warn', part: 'deliverer', fields: {}, msg: 'collector: the disk is full (9)' },
      { level: 'error', part: 'journal', fields: { source: 'web' }, msg: 'collector: a write failed' },
      { level: 'warn', part: 'journal', fields: {}, msg: 'collector: the disk is full (3) (and 2 more like it since)' },
    ]);
  });

  it('writes every line given to `each`, unlimited', () => {
    const logger = recordingLogger();
    const report = new Reporter(logger);
    report.each('warn', 'collector: try %d', 1);
    report.each('warn', 'collector: try %d', 2);
    expect(logger.lines.map(({ msg }) => msg)).toEqual(['collector: try 1', 'collector: try 2']);
  });

  it('writes to a logger without `child` for every part', () => {
    const lines: string[] = [];
    const report = new Reporter({ warn: (_fields, msg) => lines.push(msg), error: (_fields, msg) => lines.push(msg) }).child('ingress');
    report.error('collector: %s %s refused', 'POST', '/v1/batch');
    expect(lines).toEqual(['collector: POST /v1/batch refused']);
  });
});
