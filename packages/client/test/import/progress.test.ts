import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ImportCounts } from '../../src/import/importer.js';
import { estimate, ProgressReporter } from '../../src/import/progress.js';

const CLEAR = '\r\u001b[2K';

function stream(tty: boolean, columns = 200): { writes: string[]; isTTY: boolean; columns: number; write: (text: string) => void } {
  const writes: string[] = [];
  return { writes, isTTY: tty, columns, write: (text) => void writes.push(text) };
}

const counts = (): ImportCounts => ({ skipped: 0, read: 100, sent: 80, failed: 5, rejected: 10, blank: 5, bytesRead: 1_000 });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('estimate', () => {
  it('extrapolates the line count from the bytes read and averages the rate since the start', () => {
    // 100 lines in 1,000 of 4,000 bytes: about 400 lines; 100 settled in 2 s: 50/s; 300 left: 6 s.
    expect(estimate(counts(), 2_000, 4_000)).toEqual({ rate: 50, fraction: 0.25, eta: 6_000 });
  });

  it('counts skipped lines as done but not in the rate', () => {
    const resumed = { ...counts(), skipped: 100, bytesRead: 2_000 };
    expect(estimate(resumed, 2_000, 4_000)).toEqual({ rate: 50, fraction: 0.5, eta: 4_000 });
  });

  it('has no fraction or ETA without a size (stdin)', () => {
    expect(estimate(counts(), 2_000)).toEqual({ rate: 50 });
  });
});

describe('ProgressReporter', () => {
  it('prints a plain line every interval when the stream is not a terminal', () => {
    const out = stream(false);
    const live = counts();
    const reporter = new ProgressReporter({ stream: out, counts: live, totalBytes: 400_000, interval: 1_000, now: Date.now });
    reporter.start();
    vi.advanceTimersByTime(999);
    expect(out.writes).toEqual([]);

    vi.advanceTimersByTime(1);
    expect(out.writes).toEqual(['progress: 100 read, 80 sent, 5 failed, 10 rejected, 100 lines/s, 0%, ETA 6m39s\n']);

    reporter.log('line 7 rejected: bad');
    Object.assign(live, { read: 4_000, sent: 3_980, bytesRead: 40_000 });
    vi.advanceTimersByTime(1_000);
    expect(out.writes.slice(1)).toEqual([
      'line 7 rejected: bad\n',
      'progress: 4,000 read, 3,980 sent, 5 failed, 10 rejected, 2,000 lines/s, 10%, ETA 18s\n',
    ]);
    reporter.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('shows a wait in place of the ETA until it is over, the longest of overlapping ones', () => {
    const out = stream(false);
    const reporter = new ProgressReporter({ stream: out, counts: counts(), totalBytes: 400_000, interval: 1_000, now: Date.now });
    reporter.start();
    reporter.waiting(90_000, 'rate limited');
    reporter.waiting(500, 'retrying');
    vi.advanceTimersByTime(1_000);
    expect(out.writes).toEqual(['progress: 100 read, 80 sent, 5 failed, 10 rejected, 100 lines/s, 0%, waiting 1m29s (rate limited)\n']);

    vi.advanceTimersByTime(89_000);
    expect(out.writes.at(-1)).toMatch(/, 0%, ETA [\dhms]+\n$/);
    reporter.stop();
  });

  it('says "valid" in a dry run and leaves out percent and ETA without a size', () => {
    const out = stream(false);
    const reporter = new ProgressReporter({ stream: out, counts: counts(), interval: 500, sentLabel: 'valid', now: Date.now });
    reporter.start();
    vi.advanceTimersByTime(2_000);
    reporter.stop();
    expect(out.writes.at(-1)).toBe('progress: 100 read, 80 valid, 5 failed, 10 rejected, 50 lines/s\n');
  });

  it('redraws one status line with a bar on a terminal, keeps report lines above it, and clears it at the end', () => {
    const out = stream(true);
    const reporter = new ProgressReporter({ stream: out, counts: counts(), totalBytes: 4_000, interval: 60_000, now: Date.now });
    reporter.start();
    vi.advanceTimersByTime(2_000);
    const status = `[█████░░░░░░░░░░░░░░░]  25% 100 read · 80 sent · 5 failed · 10 rejected · 50 lines/s · ETA 6.0s`;
    expect(out.writes.at(-1)).toBe(`${CLEAR}${status}`);
    expect(out.writes.every((text) => !text.includes('\n'))).toBe(true);

    out.writes.length = 0;
    reporter.log('line 9 rejected: bad');
    expect(out.writes).toEqual([`${CLEAR}line 9 rejected: bad\n`, `${CLEAR}${status}`]);

    out.writes.length = 0;
    reporter.stop();
    expect(out.writes).toEqual([CLEAR]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('cuts the status line to the terminal width so that it never wraps', () => {
    const out = stream(true, 30);
    const reporter = new ProgressReporter({ stream: out, counts: counts(), interval: 60_000, now: Date.now });
    reporter.start();
    vi.advanceTimersByTime(200);
    reporter.stop();
    expect(out.writes[0]).toBe(`${CLEAR}100 read · 80 sent · 5 failed `.slice(0, CLEAR.length + 29));
  });

  it('assumes 80 columns on a terminal that reports none (a pty without a window)', () => {
    const out = stream(true, 0);
    const reporter = new ProgressReporter({ stream: out, counts: counts(), totalBytes: 4_000, interval: 60_000, now: Date.now });
    reporter.start();
    vi.advanceTimersByTime(200);
    reporter.stop();
    expect(out.writes[0]).toHaveLength(CLEAR.length + 79);
  });
});
