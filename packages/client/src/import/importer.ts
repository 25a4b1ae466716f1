import type { Analytics } from '../client/analytics.js';
import type { AnalyticsError } from '../core/errors.js';
import { ValidationError } from '../core/errors.js';
import { LIMITS } from '../core/limits.js';
import { parseCall, send } from './call.js';
import { type Line, readLines, type Source } from './lines.js';
import { deriveMessageId } from './message-id.js';
import type { Reject } from './rejects.js';
import { Watermark } from './watermark.js';

/** Options of {@link Importer}. */
export interface ImportOptions {
  /** The NDJSON input: a file stream, `process.stdin`, any iterable of chunks. */
  source: Source;
  /** The client that validates and sends each call (a `disable`d one for a dry run). */
  analytics: Analytics;
  /**
   * First line to send; earlier lines are read past without being parsed. Lines keep their
   * numbers from the start of the input, so their derived messageIds do not change.
   * @default 1
   */
  fromLine?: number;
  /** Stops reading once aborted; what was read is still sent. */
  signal?: AbortSignal;
  /**
   * Told about each line that is rejected or fails to deliver. A returned promise pauses reading
   * until it resolves (backpressure from a slow rejects file); it must never reject.
   */
  onReject?: (reject: Reject) => Promise<void> | void;
}

/** Live figures of an import, for progress reports. */
export interface ImportCounts {
  /** Lines before `fromLine`, read past. */
  skipped: number;
  /** Lines taken from `fromLine` on: sent, failed, rejected, blank, or still in the client. */
  read: number;
  /** Lines the service accepted (in a dry run: lines found valid). */
  sent: number;
  /** Lines the client gave up delivering. */
  failed: number;
  /** Lines that are not a valid call: bad JSON, bad fields, too large, not UTF-8. */
  rejected: number;
  /** Empty or whitespace-only lines, ignored. */
  blank: number;
  /** Bytes of input up to the end of the last line taken. */
  bytesRead: number;
}

/** How an import ended. */
export interface ImportResult extends ImportCounts {
  /**
   * The highest line N such that every line up to N was sent, rejected or blank: a later run
   * with `fromLine` N + 1 misses nothing. Lines after a failed one may have been sent too; sending
   * them again is harmless, as their messageIds repeat and the service de-duplicates them.
   */
  lastSent: number;
  /** The signal stopped the reading before the end of the input. */
  interrupted: boolean;
  /** Reading the input failed; the lines before were still sent. */
  readError?: Error;
}

const BLANK = /^\s*$/;

/**
 * Streams an NDJSON input into a client, one call per line, never holding more than the client's
 * `maxQueueSize` (it awaits `analytics.ready()` before each line). Lines without a `messageId`
 * get {@link deriveMessageId}'s. Bad lines are counted and reported, never fatal.
 */
export class Importer {
  /** Updated as lines are read and settle. */
  readonly counts: ImportCounts = { skipped: 0, read: 0, sent: 0, failed: 0, rejected: 0, blank: 0, bytesRead: 0 };
  readonly #options: ImportOptions;
  readonly #fromLine: number;
  readonly #watermark: Watermark;
  #firstFailed = Number.POSITIVE_INFINITY;
  /** Resolves `run()` once the last line taken has settled; absent until the input is read. */
  #idle: (() => void) | undefined;

  constructor(options: ImportOptions) {
    this.#options = options;
    this.#fromLine = options.fromLine ?? 1;
    this.#watermark = new Watermark(this.#fromLine - 1);
  }

  /** Reads the input to its end (or to the signal), then waits until every line taken has settled. Never rejects for a bad line or a failed delivery. */
  async run(): Promise<ImportResult> {
    const { signal } = this.#options;
    const lines = readLines(this.#options.source, LIMITS.messageBytes);
    let interrupted = false;
    let ended = false;
    let readError: Error | undefined;
    try {
      for (;;) {
        let next: IteratorResult<Line>;
        try {
          next = await lines.next();
        } catch (error) {
          readError = error as Error;
          break;
        }
        if (next.done) {
          ended = true;
          break;
        }
        const line = next.value;
        this.counts.bytesRead = line.offset;
        if (line.number >= this.#fromLine) await this.#room();
        if (signal?.aborted) {
          interrupted = true;
          break;
        }
        if (line.number < this.#fromLine) {
          this.counts.skipped += 1;
          continue;
        }
        this.counts.read += 1;
        await this.#take(line);
      }
    } finally {
      await lines.return(undefined);
    }
    await this.#options.analytics.flush();
    // A disabled client (dry run) reports on a later tick than its flush() resolves.
    if (this.#pending() > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
    return {
      ...this.counts,
      // A fromLine past the end must not claim lines the input lacks.
      lastSent: Math.min(this.#watermark.value, this.#firstFailed - 1, ended ? this.counts.skipped + this.counts.read : Number.POSITIVE_INFINITY),
      interrupted,
      ...(readError ? { readError } : {}),
    };
  }

  async #take(line: Line): Promise<void> {
    try {
      if (line.problem) throw line.problem;
      if (BLANK.test(line.text)) {
        this.counts.blank += 1;
        this.#watermark.settle(line.number);
        return;
      }
      const call = parseCall(line.text);
      if (call.params.messageId === undefined) call.params.messageId = deriveMessageId(line.number, line.text);
      const messageId = call.params.messageId as string;
      send(this.#options.analytics, call, (error) => this.#settled(line.number, messageId, error));
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      this.counts.rejected += 1;
      this.#watermark.settle(line.number);
      await this.#options.onReject?.({ line: line.number, outcome: 'rejected', code: error.code, reason: error.message, text: line.text });
    }
  }

  #settled(line: number, messageId: string, error: AnalyticsError | undefined): void {
    if (error) {
      this.counts.failed += 1;
      this.#firstFailed = Math.min(this.#firstFailed, line);
      void this.#options.onReject?.({ line, outcome: 'failed', code: error.code, reason: error.message, messageId });
    } else {
      this.counts.sent += 1;
    }
    this.#watermark.settle(line);
    if (this.#idle && this.#pending() === 0) this.#idle();
  }

  #pending(): number {
    const { read, sent, failed, rejected, blank } = this.counts;
    return read - sent - failed - rejected - blank;
  }

  /** The client's backpressure, cut short by the signal so that Ctrl-C works while the endpoint stalls. */
  #room(): Promise<void> {
    const { analytics, signal } = this.#options;
    if (signal === undefined) return analytics.ready();
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = (): void => resolve();
      signal.addEventListener('abort', onAbort, { once: true });
      void analytics.ready().then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }
}
