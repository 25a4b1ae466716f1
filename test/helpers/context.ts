import { Readable } from 'node:stream';
import type { CommandContext } from '../../packages/client/src/cli/command.js';

/** A command context with in-memory streams, for running CLI commands in the test process. */
export interface FakeContext extends CommandContext {
  out: () => string;
  err: () => string;
  /** Like a first Ctrl-C. */
  interrupt: () => void;
}

export function fakeContext(options: { stdin?: string; env?: Record<string, string> } = {}): FakeContext {
  let out = '';
  let err = '';
  const interrupt = new AbortController();
  return {
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    env: options.env ?? {},
    signal: interrupt.signal,
    force: new AbortController().signal,
    out: () => out,
    err: () => err,
    interrupt: () => interrupt.abort(),
  };
}
