import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built executable: `npm test` builds it first. Spawn it through {@link builtCli}. */
export const CLI = fileURLToPath(new URL('../../packages/client/dist/cli.js', import.meta.url));

/**
 * Each package's `src/` and the built file its tests run: `batched-analytics serve` runs the
 * client's `dist/cli.js`, which loads the collector's `dist/`.
 */
const BUILDS = [
  { src: '../../packages/client/src', built: '../../packages/client/dist/cli.js' },
  { src: '../../packages/collector/src', built: '../../packages/collector/dist/index.js' },
].map(({ src, built }) => ({ src: fileURLToPath(new URL(src, import.meta.url)), built: fileURLToPath(new URL(built, import.meta.url)) }));

let checked = false;

/**
 * The built executable, once it is known to be built from the current sources: a test file run
 * alone after an edit would otherwise test the code before the edit, and pass or fail for it.
 * @throws naming the newer source file, when `dist/` is missing or older than `src/`.
 */
export function builtCli(): string {
  if (checked) return CLI;
  for (const { src, built } of BUILDS) {
    if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` first (\`npm test\` does)`);
    const builtAt = statSync(built).mtimeMs;
    const newer = newestFile(src);
    if (newer.mtimeMs > builtAt) {
      throw new Error(
        `${path.relative(process.cwd(), built)} is older than ${path.relative(process.cwd(), newer.file)}: the test would run stale code; run \`npm run build\` first (\`npm test\` does)`,
      );
    }
  }
  checked = true;
  return CLI;
}

function newestFile(dir: string): { file: string; mtimeMs: number } {
  let newest = { file: dir, mtimeMs: 0 };
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const { mtimeMs } = statSync(file);
    if (mtimeMs > newest.mtimeMs) newest = { file, mtimeMs };
  }
  return newest;
}

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
  const child = spawn(process.execPath, [builtCli(), ...args], { env: { ...process.env, ...options.env }, stdio: 'pipe' });
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
