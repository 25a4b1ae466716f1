import { formatCount, formatDuration } from './format.js';
import type { ImportCounts } from './importer.js';

/** Where progress goes: a terminal gets a redrawn bar, anything else plain periodic lines. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  /** Width of the terminal, in characters. */
  columns?: number;
}

/** Options of {@link ProgressReporter}. */
export interface ProgressOptions {
  stream: ProgressStream;
  /** The import's live counts, sampled at each report. */
  counts: Readonly<ImportCounts>;
  /** Size of the input in bytes, when known (a file; not a pipe): enables percent and ETA. */
  totalBytes?: number;
  /** Time between two plain lines when the stream is not a terminal, in ms. */
  interval: number;
  /**
   * What delivered lines are called: `sent`, or `valid` in a dry run.
   * @default 'sent'
   */
  sentLabel?: string;
  /**
   * Clock in ms, for tests.
   * @default performance.now
   */
  now?: () => number;
}

/** How far an import has come, derived from its counts. */
export interface Estimate {
  /** Lines settled per second since the start (skipped lines excluded). */
  rate: number;
  /** Share of the input done, from 0 to 1; absent without a known size. */
  fraction?: number;
  /** Time left, in ms; absent until it can be estimated. */
  eta?: number;
}

/** Terminal redraws, in ms: smooth enough, cheap enough. */
const REDRAW_INTERVAL = 200;
const BAR_WIDTH = 20;
const CLEAR_LINE = '\r\u001b[2K';

/**
 * Estimates progress from the counts: the total line count is extrapolated from the bytes read so
 * far, and the rate is the average since the start.
 */
export function estimate(counts: Readonly<ImportCounts>, elapsed: number, totalBytes?: number): Estimate {
  const settled = counts.sent + counts.failed + counts.rejected + counts.blank;
  const rate = elapsed > 0 ? (settled * 1000) / elapsed : 0;
  if (totalBytes === undefined || counts.bytesRead === 0) return { rate };
  const total = ((counts.skipped + counts.read) * totalBytes) / counts.bytesRead;
  const done = counts.skipped + settled;
  const fraction = total > 0 ? Math.min(1, done / total) : 1;
  return rate > 0 ? { rate, fraction, eta: (Math.max(0, total - done) * 1000) / rate } : { rate, fraction };
}

/**
 * Reports an import's progress: on a terminal, one status line redrawn in place (lines read,
 * sent, failed, rejected, rate, ETA and a bar when the size is known); elsewhere (a pipe, a CI
 * log), one plain line every `interval` ms. Report lines written through `log()` never collide
 * with the status line.
 */
export class ProgressReporter {
  readonly #options: ProgressOptions;
  readonly #now: () => number;
  readonly #tty: boolean;
  #start = 0;
  /** The redraw or report timer; absent unless started. */
  #timer: NodeJS.Timeout | undefined;
  /** Whether the terminal's current line holds the status line. */
  #drawn = false;
  /** While the client waits (a rate limit, a retry): when the wait ends, on the reporter's clock, and why. */
  #wait: { until: number; reason: string } | undefined;

  constructor(options: ProgressOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#tty = options.stream.isTTY === true;
  }

  /** Starts the clock and the periodic reports; the timer does not hold the process open. */
  start(): void {
    this.#start = this.#now();
    const tick = this.#tty ? () => this.#draw() : () => this.#options.stream.write(`${this.#line(false)}\n`);
    this.#timer = setInterval(tick, this.#tty ? REDRAW_INTERVAL : this.#options.interval);
    this.#timer.unref();
  }

  /** Writes a report line (a rejected line, a retry) above the status line. */
  log(text: string): void {
    this.#options.stream.write(`${this.#drawn ? CLEAR_LINE : ''}${text}\n`);
    if (this.#drawn) this.#draw();
  }

  /**
   * Shows that sending waits for `delay` ms (the service's rate limit, a retry's backoff): the status
   * line says so, with the time left, instead of an ETA that would only grow meanwhile.
   */
  waiting(delay: number, reason: string): void {
    const until = this.#now() + delay;
    // Batches wait side by side: the line tells of the longest wait.
    if (this.#wait === undefined || until >= this.#wait.until) this.#wait = { until, reason };
  }

  /** Stops reporting and clears the status line, leaving the terminal for the summary. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#drawn) this.#options.stream.write(CLEAR_LINE);
    this.#drawn = false;
  }

  #draw(): void {
    // A terminal of unknown size (a pty without a window) reports 0 columns.
    const columns = this.#options.stream.columns || 80;
    this.#options.stream.write(`${CLEAR_LINE}${this.#line(true).slice(0, Math.max(0, columns - 1))}`);
    this.#drawn = true;
  }

  #line(tty: boolean): string {
    const { counts, totalBytes, sentLabel = 'sent' } = this.#options;
    const now = this.#now();
    const { rate, fraction, eta } = estimate(counts, now - this.#start, totalBytes);
    const parts = [
      `${formatCount(counts.read)} read`,
      `${formatCount(counts.sent)} ${sentLabel}`,
      `${formatCount(counts.failed)} failed`,
      `${formatCount(counts.rejected)} rejected`,
      `${formatCount(rate)} lines/s`,
    ];
    const percent = fraction === undefined ? '' : `${Math.floor(fraction * 100)}%`;
    const wait = this.#wait !== undefined && this.#wait.until > now ? this.#wait : undefined;
    const left = wait
      ? `waiting ${formatDuration(wait.until - now)} (${wait.reason})`
      : eta === undefined
        ? ''
        : `ETA ${formatDuration(eta)}`;
    if (!tty) return `progress: ${[...parts, percent, left].filter(Boolean).join(', ')}`;
    const bar = fraction === undefined ? '' : `[${'█'.repeat(Math.round(fraction * BAR_WIDTH)).padEnd(BAR_WIDTH, '░')}] ${percent.padStart(4)} `;
    return `${bar}${parts.join(' · ')}${left ? ` · ${left}` : ''}`;
  }
}
