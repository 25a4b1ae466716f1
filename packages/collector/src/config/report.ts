import { formatWithOptions } from 'node:util';
import { log, Throttle } from 'batched-analytics/internal';

/** How serious a line is: warnings and errors reach the logger whatever `DEBUG` says. */
export type ReportLevel = 'warn' | 'error';

/**
 * What a report is about, for a log format that keeps fields apart (`--log-format json`). Typed
 * so that nothing else gets in: never a message's contents, a secret, a token or a write key.
 */
export interface ReportFields {
  source?: string;
  /** A receiver URL as `displayUrl` shows it (no credentials, no query), or the collector's own. */
  url?: string;
  deliveryId?: string;
  messageId?: string;
  /** An HTTP status. */
  status?: number;
  /** A config entry, e.g. `sources[1].writeKey`. */
  entry?: string;
}

/**
 * Where a collector writes its warnings and errors: a pino logger, or any object with these
 * methods. Each line is one formatted text and the fields it is about.
 */
export interface CollectorLogger {
  warn(fields: ReportFields, msg: string): void;
  error(fields: ReportFields, msg: string): void;
  /**
   * A logger for one part of the collector (`{ part: 'journal' }`), as pino's `child`; without it,
   * every part writes to this one.
   */
  child?(bindings: { part: string }): CollectorLogger;
}

/**
 * The same line (its format string, about the same source and URL) is written at most once per
 * this many ms by one reporter; when the interval ends, the latest one held back is written with
 * how many were. A full disk fails every request: without this it would write a line per request.
 */
export const REPORT_INTERVAL = 10_000;

/** A logger of the default, human format, writing whole lines (time, level, text) through `write`. */
export function humanLogger(write: (line: string) => void): CollectorLogger {
  const line = (level: ReportLevel, msg: string) => write(`${new Date().toISOString()} ${level.toUpperCase()} ${msg}\n`);
  return { warn: (_fields, msg) => line('warn', msg), error: (_fields, msg) => line('error', msg) };
}

/** The default logger: one human line each on stderr. */
const stderrLogger: CollectorLogger = humanLogger((line) => process.stderr.write(line));

/** `logger`'s child for `part`, or `logger` itself when it makes none. */
export function partLogger(logger: CollectorLogger, part: string): CollectorLogger {
  return logger.child?.({ part }) ?? logger;
}

/** A line held back, written at the end of its interval unless another of its kind goes first. */
interface HeldLine {
  level: ReportLevel;
  fields: ReportFields;
  format: string;
  args: unknown[];
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Reports the failures an operator must see (storage, the database, the journal, deliveries) to
 * one logger, rate-limited per reporter: each part of a collector gets its own, so two collectors
 * in one process share nothing. Lines about another source or URL are another kind: one URL's
 * failures never hide another's. Also goes to `DEBUG=analytics` (every time, not rate-limited),
 * where the collector's other lines are.
 */
export class Reporter {
  /** The logger parts are made from: a part of a part is named once, by its own name. */
  readonly #root: CollectorLogger;
  readonly #logger: CollectorLogger;
  readonly #throttle = new Throttle(REPORT_INTERVAL);
  /** By kind; each for at most one interval. */
  readonly #held = new Map<string, HeldLine>();

  constructor(logger: CollectorLogger = stderrLogger, part?: string) {
    this.#root = logger;
    this.#logger = part === undefined ? logger : partLogger(logger, part);
  }

  /** A reporter for `part` of the collector, with a rate limit of its own. */
  child(part: string): Reporter {
    return new Reporter(this.#root, part);
  }

  warn(format: string, ...args: unknown[]): void;
  warn(fields: ReportFields, format: string, ...args: unknown[]): void;
  warn(first: ReportFields | string, ...rest: unknown[]): void {
    this.#throttled('warn', first, rest);
  }

  error(format: string, ...args: unknown[]): void;
  error(fields: ReportFields, format: string, ...args: unknown[]): void;
  error(first: ReportFields | string, ...rest: unknown[]): void {
    this.#throttled('error', first, rest);
  }

  /**
   * Without the rate limit, for a caller that paces its lines itself and whose every line counts
   * (each try of a start that waits for its database).
   */
  each(level: ReportLevel, format: string, ...args: unknown[]): void {
    log(format, ...args);
    this.#logger[level]({}, formatted(format, args));
  }

  #throttled(level: ReportLevel, first: ReportFields | string, rest: unknown[]): void {
    const [fields, format, args] = typeof first === 'string' ? [{}, first, rest] : [first, rest[0] as string, rest.slice(1)];
    log(format, ...args);
    // Joined by a character neither a format, a source name nor a URL holds.
    const kind = `${format}\n${fields.source ?? ''}\n${fields.url ?? ''}`;
    const held = this.#throttle.admit(kind);
    const waiting = this.#held.get(kind);
    if (held === undefined) {
      // Formatted only if it is written: a full disk holds back a line per request.
      const timer = waiting?.timer ?? setTimeout(() => this.#release(kind), this.#throttle.endsIn(kind)).unref();
      this.#held.set(kind, { level, fields, format, args, timer });
      return;
    }
    // Its timer came late (a busy loop): this line counts the one it held.
    if (waiting !== undefined) {
      clearTimeout(waiting.timer);
      this.#held.delete(kind);
    }
    this.#write({ level, fields, format, args }, held);
  }

  #release(kind: string): void {
    const line = this.#held.get(kind)!;
    this.#held.delete(kind);
    this.#write(line, this.#throttle.release(kind) - 1);
  }

  #write({ level, fields, format, args }: Pick<HeldLine, 'level' | 'fields' | 'format' | 'args'>, others: number): void {
    const line = formatted(format, args);
    this.#logger[level](fields, others > 0 ? `${line} (and ${others} more like it since)` : line);
  }
}

function formatted(format: string, args: unknown[]): string {
  return formatWithOptions({ breakLength: Infinity, depth: 4 }, format, ...args);
}
