import type { Readable } from 'node:stream';
import { AnalyticsError } from '../core/errors.js';

/** Exit codes of the command-line tool. */
export const EXIT = {
  /** Everything done. */
  ok: 0,
  /** Done, but some input was rejected or not delivered (or an unexpected error). */
  incomplete: 1,
  /** Bad command, flag or argument; nothing was done. */
  usage: 2,
  /** Stopped by Ctrl-C (SIGINT) or SIGTERM, after finishing what was started. */
  interrupted: 130,
} as const;

/** An output of the command-line tool. */
export interface Output {
  write(text: string): unknown;
  /** Set on a terminal. */
  isTTY?: boolean;
  /** Width of the terminal, in characters. */
  columns?: number;
}

/** What a command runs with: the process's streams and signals, replaceable in tests. */
export interface CommandContext {
  stdin: Readable;
  /** Results (a summary). */
  stdout: Output;
  /** Progress and reports. */
  stderr: Output;
  env: Record<string, string | undefined>;
  /** Aborted by the first Ctrl-C: stop taking new work, finish what was started. */
  signal: AbortSignal;
  /** Aborted by the second Ctrl-C: abandon what was started too. */
  force: AbortSignal;
}

/** A subcommand: `batched-analytics <name> ...`. */
export interface Command {
  /** One line for the top-level `--help`. */
  summary: string;
  /**
   * Runs the command with the arguments after its name.
   * @returns the exit code.
   * @throws {UsageError} (or `ConfigError`) for bad arguments: the dispatcher prints it and exits with 2.
   */
  run(args: string[], context: CommandContext): Promise<number>;
}

/** A command line the tool cannot act on: unknown command or flag, missing or bad value. */
export class UsageError extends AnalyticsError {
  constructor(message: string) {
    super(message, { code: 'ERR_USAGE' });
  }
}
