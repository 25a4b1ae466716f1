import { formatWithOptions } from 'node:util';
import { log, Throttle } from 'batched-analytics/internal';

/** How serious a line is: warnings and errors reach stderr whatever `DEBUG` says. */
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

/** Where the collector's warnings and errors go: one formatted line each, with its fields. */
export type ReportSink = (level: ReportLevel, line: string, fields: ReportFields) => void;

/**
 * The same line (its format string) is written at most once per this many ms; the ones held back
 * are counted into the next. A full disk fails every request: without this it would write a line
 * per request.
 */
export const REPORT_INTERVAL = 10_000;

/** A line of the default, human format: time, level, text. */
export function humanLine(level: string, line: string): string {
  return `${new Date().toISOString()} ${level.toUpperCase()} ${line}\n`;
}

const toStderr: ReportSink = (level, line) => {
  process.stderr.write(humanLine(level, line));
};

let sink: ReportSink = toStderr;
const throttle = new Throttle(REPORT_INTERVAL);

/**
 * Reports a failure an operator must see: storage, the database, the journal. Also goes to
 * `DEBUG=analytics` (every time, not rate-limited), where the collector's other lines are.
 */
export function report(level: ReportLevel, format: string, ...args: unknown[]): void {
  reportAbout(level, {}, format, ...args);
}

/** {@link report} with what the line is about, as fields. */
export function reportAbout(level: ReportLevel, fields: ReportFields, format: string, ...args: unknown[]): void {
  log(format, ...args);
  const held = throttle.admit(format);
  if (held === undefined) return;
  const line = formatted(format, args);
  sink(level, held > 0 ? `${line} (and ${held} more like it since)` : line, fields);
}

/**
 * {@link report} without the rate limit, for a caller that paces its lines itself and whose every
 * line counts (each try of a start that waits for its database).
 */
export function reportEach(level: ReportLevel, format: string, ...args: unknown[]): void {
  log(format, ...args);
  sink(level, formatted(format, args), {});
}

function formatted(format: string, args: unknown[]): string {
  return formatWithOptions({ breakLength: Infinity, depth: 4 }, format, ...args);
}

/** Sends reports elsewhere (the serve command's log format, tests); returns the previous sink. */
export function setReportSink(next: ReportSink): ReportSink {
  const previous = sink;
  sink = next;
  throttle.clear();
  return previous;
}
