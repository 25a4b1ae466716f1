// The collector's warnings and errors: rate-limited per reporter and per subject, so that one part
// (or one embedded collector, or one URL) never holds back another's lines, and what was held back
// is told when the interval ends.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REPORT_INTERVAL, Reporter } from '../../src/config/report.js';
import { createLogger } from '../../src/observe/log.js';
import { recordingLogger } from '../observe/recording-logger.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('Reporter', () => {
  it('writes the same line once per interval, the held back ones counted at its end, and each part keeps its own count', () => {
    vi.useFakeTimers();
    const logger = recordingLogger();
    const journal = new Reporter(logger).child('journal');
    const deliverer = new Reporter(logger).child('deliverer');
    for (let i = 0; i < 3; i += 1) journal.warn('collector: the disk is full (%d)', i);
    deliverer.warn('collector: the disk is full (%d)', 9);
    journal.error({ source: 'web' }, 'collector: %s failed', 'a write');
    vi.advanceTimersByTime(REPORT_INTERVAL);
    journal.warn('collector: the disk is full (%d)', 3);
    vi.advanceTimersByTime(REPORT_INTERVAL);

    expect(logger.lines).toEqual([
      { level: 'warn', part: 'journal', fields: {}, msg: 'collector: the disk is full (0)' },
      { level: 'warn', part: 'deliverer', fields: {}, msg: 'collector: the disk is full (9)' },
      { level: 'error', part: 'journal', fields: { source: 'web' }, msg: 'collector: a write failed' },
      { level: 'warn', part: 'journal', fields: {}, msg: 'collector: the disk is full (2) (and 1 more like it since)' },
      { level: 'warn', part: 'journal', fields: {}, msg: 'collector: the disk is full (3)' },
    ]);
  });

  it('limits lines about different sources or URLs apart: one URL disabled never hides another', () => {
    vi.useFakeTimers();
    const logger = recordingLogger();
    const report = new Reporter(logger).child('urls');
    const disabled = (source: string, url: string) => report.warn({ source, url }, 'collector: %s: webhook URL %s is disabled', source, url);
    disabled('web', 'http://127.0.0.1:1/first');
    disabled('web', 'http://127.0.0.1:2/second');
    disabled('shop', 'http://127.0.0.1:2/second');
    disabled('web', 'http://127.0.0.1:1/first');

    expect(logger.lines.map(({ fields }) => fields)).toEqual([
      { source: 'web', url: 'http://127.0.0.1:1/first' },
      { source: 'web', url: 'http://127.0.0.1:2/second' },
      { source: 'shop', url: 'http://127.0.0.1:2/second' },
    ]);
  });

  it('writes what it held back once the interval ends, though no other line of its kind comes, the latest one with the count', () => {
    vi.useFakeTimers();
    const logger = recordingLogger();
    const report = new Reporter(logger).child('deliveries');
    for (let n = 1; n <= 20; n += 1) report.warn({ source: 'web' }, 'collector: d-%d given up', n);
    vi.advanceTimersByTime(REPORT_INTERVAL - 1);
    expect(logger.lines).toHaveLength(1);
    vi.advanceTimersByTime(1);
    // A new interval starts with that line: the next one waits for its end in turn.
    report.warn({ source: 'web' }, 'collector: d-%d given up', 21);
    vi.advanceTimersByTime(REPORT_INTERVAL);

    expect(logger.lines).toEqual([
      { level: 'warn', part: 'deliveries', fields: { source: 'web' }, msg: 'collector: d-1 given up' },
      { level: 'warn', part: 'deliveries', fields: { source: 'web' }, msg: 'collector: d-20 given up (and 18 more like it since)' },
      { level: 'warn', part: 'deliveries', fields: { source: 'web' }, msg: 'collector: d-21 given up' },
    ]);
    vi.advanceTimersByTime(10 * REPORT_INTERVAL);
    expect(logger.lines).toHaveLength(3);
  });

  it('keeps no process alive to write what it held back', () => {
    const timers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    const before = timers();
    const report = new Reporter(recordingLogger());
    report.warn('collector: the disk is full');
    report.warn('collector: the disk is full');
    expect(timers()).toBe(before);
  });

  it('names a part of a part by its own name alone, once, in a JSON line', () => {
    const lines: string[] = [];
    new Reporter(createLogger('json', (line) => lines.push(line))).child('deliverer').child('urls').warn({ source: 'web' }, 'collector: a URL is disabled');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.match(/"part":/g)).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ part: 'urls', source: 'web', msg: 'collector: a URL is disabled' });
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
