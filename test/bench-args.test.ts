// The benchmarks are commands people run: --help answers, and a mistake is one line, not a stack.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

async function bench(script: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [`bench/${script}`, ...args], { cwd: root });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

describe.each([
  ['run.mjs', 'npm run bench', '--events'],
  ['collector.mjs', 'npm run bench:collector', '--messages'],
  ['destination.mjs', 'npm run bench:destination', '--deliveries'],
  ['track-ab.mjs', 'npm run bench:track', '--events'],
])('bench/%s', (script, command, countFlag) => {
  it('prints its usage for --help and exits 0', async () => {
    const result = await bench(script, ['--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain(command);
    expect(result.stdout).toContain(countFlag);
  });

  it.each([[[countFlag, 'many']], [[countFlag, '0']], [['--no-such-flag']]])('refuses %j in one line with exit code 2', async (args) => {
    const result = await bench(script, args);
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^(Expected --|Unknown option)/), 'Run with --help for the options.']);
  });
});
