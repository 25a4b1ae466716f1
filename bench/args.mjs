// The benchmarks' command lines: --help prints the usage (the script's header comment), and a bad
// flag or value is one line and exit code 2, not a stack trace.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The leading `//` comment of `script` (an import.meta.url), as plain text: the usage. */
function usageOf(script) {
  const lines = readFileSync(new URL(script), 'utf8').split('\n');
  const comment = [];
  for (const line of lines) {
    if (!line.startsWith('//')) break;
    comment.push(line.replace(/^\/\/ ?/, ''));
  }
  return `${comment.join('\n')}\n`;
}

/** Exits 2 with one line saying what is wrong. */
export function fail(message) {
  process.stderr.write(`${message}\nRun with --help for the options.\n`);
  process.exit(2);
}

/** `parseArgs` with `--help` and refusals as above; `script` is the caller's import.meta.url. */
export function benchArgs(script, options) {
  let values;
  try {
    ({ values } = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } } }));
  } catch (error) {
    fail(error.message);
  }
  if (values.help) {
    process.stdout.write(usageOf(script));
    process.exit(0);
  }
  return values;
}

/** `values[name]` as an integer >= `least`, else exit 2 naming the flag. */
export function integerFlag(values, name, least) {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < least) fail(`Expected --${name} to be an integer >= ${least}, got ${JSON.stringify(values[name])}`);
  return value;
}

/**
 * `values['node-flags']` as a list of Node/V8 flags (given as `--node-flags="--a --b"`: a value that
 * starts with a dash needs the `=`).
 */
export function nodeFlags(values) {
  return values['node-flags'].split(/\s+/).filter((flag) => flag !== '');
}
