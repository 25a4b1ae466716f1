import { type Logger as Pino, pino } from 'pino';
import { type CollectorLogger, humanLogger, type ReportFields } from '../config/report.js';

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

/** The serve command's log: its own lines, and the collector's warnings and errors (it is their `logger`). */
export interface Logger extends CollectorLogger {
  readonly format: LogFormat;
  info(msg: string, fields?: LogFields): void;
  child(bindings: { part: string }): Logger;
}

/**
 * A logger writing whole lines through `write` (the command's stderr). JSON lines carry `level`
 * (a name), `time` (ISO 8601), `msg` and the fields given: only those typed in {@link LogFields},
 * so that no message content, secret or token can reach a line.
 */
export function createLogger(format: LogFormat, write: (line: string) => void): Logger {
  if (format === 'human') {
    // The serve command's own lines stay plain text, as they were before there was a choice; the
    // part writing a line does not show in it.
    const human: Logger = { ...humanLogger(write), format, info: (msg) => write(`${msg}\n`), child: () => human };
    return human;
  }
  return jsonLogger(pino(
    {
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write },
  ));
}

/** JSON lines through `json`; a part's lines carry its name (`"part":"journal"`). */
function jsonLogger(json: Pino): Logger {
  return {
    format: 'json',
    info: (msg, fields = {}) => json.info(fields, msg),
    warn: (fields, msg) => json.warn(fields, msg),
    error: (fields, msg) => json.error(fields, msg),
    child: (bindings) => jsonLogger(json.child(bindings)),
  };
}
