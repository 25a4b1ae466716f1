import { ConfigError } from '../core/errors.js';
import { type Command, type CommandContext, EXIT, UsageError } from './command.js';

/**
 * Runs one command as `program name ...args`: usage and config errors are printed as one line on
 * stderr and give exit code 2; anything unexpected is printed with its stack and gives 1.
 * @returns the exit code.
 */
export async function runCommand(program: string, command: Command, args: string[], context: CommandContext): Promise<number> {
  try {
    return await command.run(args, context);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      context.stderr.write(`${program}: ${error.message} (run \`${program} --help\` for usage)\n`);
      return EXIT.usage;
    }
    context.stderr.write(`${program}: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    return EXIT.incomplete;
  }
}

/**
 * An executable's body (`bin`): wires the process's streams and signals to `run` and sets the
 * exit code. The first SIGINT or SIGTERM asks to finish what was started, the second to abandon
 * it, the third exits at once.
 */
export async function runMain(run: (argv: string[], context: CommandContext) => Promise<number>): Promise<void> {
  const interrupt = new AbortController();
  const force = new AbortController();
  const onSignal = (): void => {
    if (!interrupt.signal.aborted) interrupt.abort();
    else if (!force.signal.aborted) force.abort();
    else process.exit(EXIT.interrupted);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const code = await run(process.argv.slice(2), {
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal: interrupt.signal,
    force: force.signal,
  });
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.exitCode = code;
}
