import { type FileHandle, open, realpath, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { Analytics } from '../client/analytics.js';
import { formatDuration } from '../import/format.js';
import { Importer } from '../import/importer.js';
import { ProgressReporter } from '../import/progress.js';
import { RejectsFile } from '../import/rejects.js';
import { formatSummary } from '../import/summary.js';
import { integerFlag, parseFlags } from './args.js';
import { MAX_DELAY } from '../core/validate.js';
import { type Command, type CommandContext, EXIT, UsageError } from './command.js';

/** Environment variable read when `--write-key` is not given (keeps the key out of `ps` and shell history). */
export const WRITE_KEY_ENV = 'BATCHED_ANALYTICS_WRITE_KEY';

/** Import defaults: bigger batches than the client's 20, as an import is about throughput. */
const DEFAULT_FLUSH_AT = 100;
const DEFAULT_PROGRESS_INTERVAL = 5_000;

const HELP = `Usage: batched-analytics import <file.ndjson | -> [options]

Sends a file of calls, one JSON object per line, to the collection service (historical import):
  {"type":"track","userId":"u1","event":"Order Completed","timestamp":"2024-03-01T12:00:00.000Z"}
type is one of identify, track, page, screen, group, alias; the other fields are the call's.
Timestamps are kept. A line without a messageId gets one derived from its line number and text,
so importing the same file again sends the same ids and the service de-duplicates them.

Options:
  --write-key KEY         the source's write key (default: $${WRITE_KEY_ENV}); not needed with --dry-run
  --endpoint URL          base URL of the service (default: https://api.segment.io)
  --flush-at N            messages per batch (default: ${DEFAULT_FLUSH_AT})
  --max-queue-size N      most messages held in memory at once (default: 10000)
  --max-retries N         retries of a batch that failed (network error, timeout, 5xx) before it
                          counts as failed (default: 10); a rate limit's wait is not a retry
  --timeout MS            time allowed for each request (default: 10000)
  --spool DIR             keep every line read in DIR until it is delivered: a killed import loses at
                          most its last 100 ms, and a re-run with the same DIR sends what was left first
  --rejects FILE          write each rejected or undelivered line to FILE, one JSON record per line
                          (FILE is truncated first, so it must not be the input)
  --from-line N           start at line N; lines keep their numbers, so their messageIds do not change
  --dry-run               check every line, send nothing
  --progress-interval MS  time between progress lines when stderr is not a terminal (default: ${DEFAULT_PROGRESS_INTERVAL})
  -h, --help              show this help

Ctrl-C stops reading, sends what was read, and prints the --from-line to resume from
(a second Ctrl-C stops waiting for the endpoint).

Exit codes: 0 every line sent; 1 a line was rejected or not delivered; 2 usage error; 130 interrupted.
`;

/** `batched-analytics import`: a streaming NDJSON import with backpressure, progress and safe re-runs. */
export const importCommand: Command = {
  summary: 'send a file of calls (NDJSON) to the service: a historical import',
  run: runImport,
};

async function runImport(args: string[], context: CommandContext): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      'write-key': { type: 'string' },
      endpoint: { type: 'string' },
      'flush-at': { type: 'string' },
      'max-queue-size': { type: 'string' },
      'max-retries': { type: 'string' },
      timeout: { type: 'string' },
      rejects: { type: 'string' },
      spool: { type: 'string' },
      'from-line': { type: 'string' },
      'dry-run': { type: 'boolean' },
      'progress-interval': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    context.stdout.write(HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1) {
    throw new UsageError(`Expected one input file (or - for stdin), got ${positionals.length}`);
  }
  const path = positionals[0]!;
  const dryRun = values['dry-run'] === true;
  const writeKey = values['write-key'] ?? context.env[WRITE_KEY_ENV] ?? (dryRun ? 'dry-run' : undefined);
  if (!writeKey) throw new UsageError(`Expected --write-key KEY (or ${WRITE_KEY_ENV} in the environment)`);
  const fromLine = integerFlag('--from-line', values['from-line'], 1) ?? 1;
  const interval = integerFlag('--progress-interval', values['progress-interval'], 1, MAX_DELAY) ?? DEFAULT_PROGRESS_INTERVAL;
  const maxQueueSize = integerFlag('--max-queue-size', values['max-queue-size'], 1);
  if (values.rejects !== undefined) await assertNotInput(values.rejects, path);

  const analytics = new Analytics(writeKey, {
    endpoint: values.endpoint,
    flushAt: integerFlag('--flush-at', values['flush-at'], 1) ?? DEFAULT_FLUSH_AT,
    maxQueueSize,
    maxRetries: integerFlag('--max-retries', values['max-retries'], 0),
    timeout: integerFlag('--timeout', values.timeout, 1, MAX_DELAY),
    disable: dryRun,
    spool: values.spool,
    // Every failure is reported here, per batch and per line: the client need not tell stderr too.
    silent: true,
  });
  let input: Input | undefined;
  let rejects: RejectsFile | undefined;
  try {
    input = await openInput(path, context);
    rejects = values.rejects === undefined ? undefined : await openRejects(values.rejects);
  } catch (error) {
    input?.source.destroy();
    await analytics.close();
    throw error;
  }
  return importWith(analytics, input, rejects, { fromLine, interval, dryRun }, context);
}

interface Input {
  name: string;
  source: Readable;
  /** Bytes, when the input is a regular file. */
  size?: number;
}

async function openInput(path: string, context: CommandContext): Promise<Input> {
  if (path === '-') return { name: 'stdin', source: context.stdin };
  let handle: FileHandle | undefined;
  try {
    handle = await open(path);
    const stat = await handle.stat();
    // Opening a directory succeeds; reading it would fail only once the import has started.
    if (stat.isDirectory()) throw new Error('it is a directory');
    return { name: path, source: handle.createReadStream(), ...(stat.isFile() ? { size: stat.size } : {}) };
  } catch (error) {
    await handle?.close();
    throw new UsageError(`Cannot read ${path}: ${(error as Error).message}`);
  }
}

/**
 * Opening the rejects file truncates it: were it the input, the import would read an empty file,
 * report success and leave the input lost. The same file may hide behind another spelling, a
 * symlink or a hard link, so the files are compared, not the paths.
 * @throws {UsageError} when `rejects` is the input file.
 */
async function assertNotInput(rejects: string, input: string): Promise<void> {
  if (input === '-') return;
  // A file that does not exist yet cannot be the input; an input that cannot be read is reported when it is opened.
  const [a, b] = await Promise.all([fileIdentity(rejects), fileIdentity(input)]);
  if (!a || !b) return;
  // Some file systems report no inode (0): the real path alone must decide there.
  const sameInode = a.ino !== 0n && a.dev === b.dev && a.ino === b.ino;
  if (sameInode || a.realPath === b.realPath) {
    throw new UsageError(`Expected --rejects to be a file other than the input ${input}, got ${rejects}`);
  }
}

/** The file `path` names, or `undefined` when there is none. Inodes as bigints: a number loses their low digits on Windows. */
async function fileIdentity(path: string): Promise<{ realPath: string; dev: bigint; ino: bigint } | undefined> {
  try {
    const [realPath, { dev, ino }] = await Promise.all([realpath(path), stat(path, { bigint: true })]);
    return { realPath, dev, ino };
  } catch {
    return undefined;
  }
}

async function openRejects(path: string): Promise<RejectsFile> {
  try {
    return await RejectsFile.open(path);
  } catch (error) {
    throw new UsageError(`Cannot write --rejects ${path}: ${(error as Error).message}`);
  }
}

async function importWith(
  analytics: Analytics,
  input: Input,
  rejects: RejectsFile | undefined,
  options: { fromLine: number; interval: number; dryRun: boolean },
  context: CommandContext,
): Promise<number> {
  const importer = new Importer({
    source: input.source,
    analytics,
    fromLine: options.fromLine,
    signal: context.signal,
    onReject: (reject) => {
      if (reject.outcome === 'rejected') reporter.log(`line ${reject.line} rejected: ${reject.reason}`);
      return rejects?.write(reject);
    },
  });
  const reporter = new ProgressReporter({
    stream: context.stderr,
    counts: importer.counts,
    ...(input.size === undefined ? {} : { totalBytes: input.size }),
    interval: options.interval,
    sentLabel: options.dryRun ? 'valid' : 'sent',
  });
  // Lines that fail are reported per batch here, and per line in the rejects file.
  analytics.on('flush', ({ count, error }) => {
    if (error) reporter.log(`${count} messages failed to deliver: ${error.message}`);
  });
  analytics.on('retry', ({ count, attempt, delay, error }) => {
    reporter.log(`attempt ${attempt} to send ${count} messages failed (${error.message}); retrying in ${formatDuration(delay)}`);
    reporter.waiting(delay, 'retrying');
  });
  analytics.on('rate-limit', ({ status, delay }) => {
    reporter.log(`rate limited (status ${status}): waiting ${formatDuration(delay)} before sending again`);
    reporter.waiting(delay, 'rate limited');
  });
  const stopReading = (): void => reporter.log('Interrupted: reading stopped; sending the lines read (Ctrl-C again to stop waiting)');
  const abandon = (): void => {
    reporter.log('Interrupted again: lines not delivered yet are reported failed');
    void analytics.close({ timeout: 0 });
  };
  context.signal.addEventListener('abort', stopReading, { once: true });
  context.force.addEventListener('abort', abandon, { once: true });

  const started = performance.now();
  reporter.start();
  const result = await importer.run().finally(() => reporter.stop());
  await analytics.close();
  context.signal.removeEventListener('abort', stopReading);
  context.force.removeEventListener('abort', abandon);
  let rejectsError: Error | undefined;
  await rejects?.close().catch((error: Error) => {
    rejectsError = error;
  });

  context.stdout.write(
    formatSummary(result, {
      input: input.name,
      elapsed: performance.now() - started,
      dryRun: options.dryRun,
      ...(rejects ? { rejectsPath: rejects.path } : {}),
      peakRss: process.resourceUsage().maxRSS * 1024,
    }),
  );
  if (rejectsError) context.stderr.write(`error: writing ${rejects!.path} failed: ${rejectsError.message}\n`);
  if (result.interrupted) return EXIT.interrupted;
  return result.failed + result.rejected > 0 || result.readError || rejectsError ? EXIT.incomplete : EXIT.ok;
}
