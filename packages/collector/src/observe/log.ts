import { pino } from 'pino';
import { humanLine, type ReportFields, type ReportSink } from '../config/report.js';

/** How the serve command writes its log lines: `human` (the default) or `json`, one object a line. */
export type LogFormat = 'human' | 'json';

/** The values `--log-format` accepts, the default first. */
export const LOG_FORMATS: readonly LogFormat[] = ['human', 'json'];

/** What an informational line is about: a report's fields, and the serve command's own. */
export interface LogFields extends ReportFields {
  /** The store, a PostgreSQL URL with its password as `***`, or the data dir. */
  store?: string;
  /** Deliveries pending, e.g. at start. */
  pending?: number;
  /** Source names. */
  sources?: string[];
  /** Config entries that changed but take effect only after a restart. */
  restart?: string[];
}

/** The serve command's log: its own lines, and the collector's reports (through `sink`). */
export interface Logger {
  readonly format: LogFormat;
  info(msg: string, fields?: LogFields): void;
  /** Where `setReportSink` sends the collector's warnings and errors. */
  readonly sink: ReportSink;
}

/**
 * A logger writing whole lines through `write` (the command's stderr). JSON lines carry `level`
 * (a name), `time` (ISO 8601), `msg` and the fields given: only those typed in {@link LogFields},
 * so that no message content, secret or token can reach a line.
 */
export function createLogger(format: LogFormat, write: (line: string) => void): Logger {
  if (format === 'human') {
    // The serve command's own lines stay plain text, as they were before there was a choice.
    return { format, info: (msg) => write(`${msg}\n`), sink: (level, msg) => write(humanLine(level, msg)) };
  }
  const json = pino(
    {
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write },
  );
  return {
    format,
    info: (msg, fields = {}) => json.info(fields, msg),
    sink: (level, msg, fields) => json[level](fields, msg),
  };
}
