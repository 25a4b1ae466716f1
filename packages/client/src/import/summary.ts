import { formatCount, formatDuration, formatMebibytes } from './format.js';
import type { ImportResult } from './importer.js';

/** What the summary says besides the result. */
export interface SummaryContext {
  /** The input's name: its path, or `stdin`. */
  input: string;
  /** Duration of the import, in ms. */
  elapsed: number;
  dryRun: boolean;
  /** The `--rejects` file, when there is one. */
  rejectsPath?: string;
  /** Peak resident set size of the process, in bytes. */
  peakRss: number;
}

/**
 * The end-of-import report: counts, rate, peak memory, and the last line fully sent with the
 * `--from-line` to resume from when the import did not complete.
 */
export function formatSummary(result: ImportResult, context: SummaryContext): string {
  const { elapsed, dryRun } = context;
  const lines = result.skipped + result.read;
  const head = result.interrupted
    ? `Import of ${context.input} interrupted after ${formatDuration(elapsed)}: stopped reading after line ${formatCount(lines)}.`
    : `Import of ${context.input} ${result.readError ? 'stopped' : 'finished'} after ${formatDuration(elapsed)}: ${formatCount(lines)} line${lines === 1 ? '' : 's'}.`;
  const rows: [string, number, string?][] = [
    [dryRun ? 'valid' : 'sent', result.sent],
    ['failed', result.failed],
    ['rejected', result.rejected, result.rejected + result.failed > 0 && context.rejectsPath ? `see ${context.rejectsPath}` : undefined],
    ['blank', result.blank],
  ];
  if (result.skipped > 0) rows.push(['skipped', result.skipped, 'before --from-line']);
  const settled = result.sent + result.failed + result.rejected + result.blank;
  const out = [head];
  for (const [label, count, note] of rows) out.push(`  ${label.padEnd(10)}${formatCount(count).padStart(12)}${note ? `  ${note}` : ''}`);
  out.push(`  ${'rate'.padEnd(10)}${formatCount(elapsed > 0 ? (settled * 1000) / elapsed : 0).padStart(12)}  lines/s`);
  out.push(`  ${'peak RSS'.padEnd(10)}${formatMebibytes(context.peakRss).padStart(12)}`);
  if (result.readError) out.push(`Reading the input failed: ${result.readError.message}`);
  if (dryRun) out.push('Dry run: nothing was sent.');
  out.push(`Last line fully ${dryRun ? 'checked' : 'sent'}: ${result.lastSent}`);
  if (result.interrupted || result.readError || result.failed > 0) {
    out.push(`Resume with --from-line ${result.lastSent + 1}; lines sent again keep their messageIds and are de-duplicated.`);
  }
  return `${out.join('\n')}\n`;
}
