import type { CollectorLogger, ReportFields, ReportLevel } from '../../src/config/report.js';

/** One line a {@link RecordingLogger} was given, with the parts it went through (`child`). */
export interface RecordedLine {
  level: ReportLevel;
  msg: string;
  fields: ReportFields;
  part?: string;
}

/** A logger keeping what it is given, as an embedder's own logger would receive it. */
export interface RecordingLogger extends CollectorLogger {
  readonly lines: RecordedLine[];
}

export function recordingLogger(): RecordingLogger {
  const lines: RecordedLine[] = [];
  const make = (part?: string): CollectorLogger => ({
    warn: (fields, msg) => void lines.push({ level: 'warn', msg, fields, ...(part && { part }) }),
    error: (fields, msg) => void lines.push({ level: 'error', msg, fields, ...(part && { part }) }),
    child: (bindings) => make(bindings.part),
  });
  return { ...make(), lines };
}
