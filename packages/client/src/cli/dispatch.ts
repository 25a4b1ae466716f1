import { VERSION } from '../core/version.js';
import { type Command, type CommandContext, EXIT } from './command.js';
import { importCommand } from './import.js';
import { runCommand } from './run.js';
import { serveCommand } from './serve.js';

/** The subcommands, by name. A new command is one more entry. */
export const COMMANDS: Readonly<Record<string, Command>> = {
  import: importCommand,
  serve: serveCommand,
};

const NAME = 'batched-analytics';

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const list = Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`);
  return `Usage: ${NAME} <command> [options]

Commands:
${list.join('\n')}

Run \`${NAME} <command> --help\` for a command's options.
Options: -h, --help (this list), -v, --version (the version: ${VERSION}).
`;
}

/**
 * Runs `batched-analytics <command> ...` with its arguments (`process.argv.slice(2)`).
 * Usage errors are printed as one line on stderr and give exit code 2.
 * @returns the exit code.
 */
export async function run(argv: readonly string[], context: CommandContext): Promise<number> {
  const [name, ...args] = argv;
  if (name === '-h' || name === '--help') {
    context.stdout.write(help());
    return EXIT.ok;
  }
  if (name === '-v' || name === '--version') {
    context.stdout.write(`${VERSION}\n`);
    return EXIT.ok;
  }
  if (name === undefined) {
    context.stderr.write(help());
    return EXIT.usage;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    context.stderr.write(`${NAME}: unknown command ${JSON.stringify(name)} (run \`${NAME} --help\` for the list)\n`);
    return EXIT.usage;
  }
  return runCommand(`${NAME} ${name}`, command, args, context);
}
