#!/usr/bin/env node
import { EXIT } from './command.js';
import { run } from './dispatch.js';

// The executable (`bin`): wires the process's streams and signals to the dispatcher.
const interrupt = new AbortController();
const force = new AbortController();
const onSignal = (): void => {
  // First: finish what was started. Second: abandon it. Third: the user means it.
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
