import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The built executable: `npm test` builds it first. */
export const CLI = fileURLToPath(new URL('../../packages/client/dist/cli.js', import.meta.url));

/** A running `batched-analytics` process with its output collected as it comes. */
export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stderr matches. */
  stderrMatches: (pattern: RegExp) => Promise<void>;
  /** Resolves with the exit code; -1 when a signal ended the process. */
  exit: Promise<number>;
}

/** Starts the built CLI with `args`; stdio are pipes, so it sees no terminal. */
export function startCli(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}): CliProcess {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (\`npm test\` does)`);
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...options.env }, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  let watchers: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    watchers = watchers.filter((watcher) => {
      if (!watcher.pattern.test(stderr)) return true;
      watcher.resolve();
      return false;
    });
  });
  if (options.stdin === undefined) child.stdin.end();
  else child.stdin.end(options.stdin);
  const exit = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    stderrMatches: (pattern) =>
      pattern.test(stderr) ? Promise.resolve() : new Promise<void>((resolve) => watchers.push({ pattern, resolve })),
    exit,
  };
}

/** Runs the built CLI to its end. */
export async function runCli(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const cli = startCli(args, options);
  const code = await cli.exit;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}
