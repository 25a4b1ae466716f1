import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { COMMANDS, run } from '../../src/cli/dispatch.js';
import { VERSION } from '../../src/core/version.js';
import { fakeContext } from '../../../../test/helpers/context.js';
import { startSink } from '../../../../test/helpers/sink.js';

describe('batched-analytics (dispatcher)', () => {
  it('lists every command in --help', async () => {
    const context = fakeContext();
    expect(await run(['--help'], context)).toBe(0);
    expect(context.out()).toMatch(/^Usage: batched-analytics <command> \[options\]/);
    // Names are padded to the longest one, so the summaries line up.
    const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
    for (const [name, command] of Object.entries(COMMANDS)) expect(context.out()).toContain(`  ${name.padEnd(width)}  ${command.summary}\n`);
  });

  it('prints the version', async () => {
    const context = fakeContext();
    expect(await run(['--version'], context)).toBe(0);
    expect(context.out()).toBe(`${VERSION}\n`);
  });

  it('prints the help on stderr and exits 2 without a command', async () => {
    const context = fakeContext();
    expect(await run([], context)).toBe(2);
    expect(context.err()).toMatch(/Commands:\n {2}import/);
  });

  it('names an unknown command in one line and exits 2', async () => {
    const context = fakeContext();
    expect(await run(['imprt', 'x.ndjson'], context)).toBe(2);
    expect(context.err()).toBe('batched-analytics: unknown command "imprt" (run `batched-analytics --help` for the list)\n');
    expect(await run(['toString'], fakeContext())).toBe(2);
  });
});

describe('batched-analytics import: usage errors', () => {
  it.each([
    [['--bogus'], "Unknown option '--bogus'"],
    [['--write-key'], "Option '--write-key <value>' argument missing"],
    [['--dry-run=yes', 'f'], "Option '--dry-run' does not take an argument"],
    [[], 'Expected one input file (or - for stdin), got 0'],
    [['a.ndjson', 'b.ndjson', '--write-key', 'K'], 'Expected one input file (or - for stdin), got 2'],
    [['f.ndjson'], 'Expected --write-key KEY (or BATCHED_ANALYTICS_WRITE_KEY in the environment)'],
    [['f.ndjson', '--write-key', 'K', '--flush-at', '0'], 'Expected --flush-at to be an integer >= 1, got "0"'],
    [['f.ndjson', '--write-key', 'K', '--from-line', '2.5'], 'Expected --from-line to be an integer >= 1, got "2.5"'],
    [['f.ndjson', '--write-key', 'K', '--endpoint', 'ftp://x'], 'Expected `endpoint` to be an absolute http(s) URL, got `"ftp://x"` (string)'],
    [['f.ndjson', '--write-key', 'K', '--max-queue-size', '10'], 'Expected `maxQueueSize` to be >= `flushAt` (100), got `10`'],
    [['no/such/file.ndjson', '--write-key', 'K'], "Cannot read no/such/file.ndjson: ENOENT: no such file or directory, open 'no/such/file.ndjson'"],
    [[tmpdir(), '--write-key', 'K'], `Cannot read ${tmpdir()}: it is a directory`],
    [['-', '--write-key', 'K', '--rejects', 'no/such/dir/r.ndjson'], 'Cannot write --rejects no/such/dir/r.ndjson: ENOENT'],
  ])('%j: one line naming the problem, exit 2', async (args, problem) => {
    const context = fakeContext();
    expect(await run(['import', ...args], context)).toBe(2);
    expect(context.err()).toMatch(/^batched-analytics import: [^\n]+\(run `batched-analytics import --help` for usage\)\n$/);
    expect(context.err()).toContain(problem);
    expect(context.out()).toBe('');
  });

  it('shows its flags and exit codes with --help', async () => {
    const context = fakeContext();
    expect(await run(['import', '--help'], context)).toBe(0);
    for (const flag of ['--write-key', '--endpoint', '--flush-at', '--max-queue-size', '--rejects', '--from-line', '--dry-run', '--progress-interval']) {
      expect(context.out()).toContain(`  ${flag} `);
    }
    expect(context.out()).toMatch(/Exit codes: 0 .*; 1 .*; 2 .*; 130 interrupted/);
  });

  it('reads the write key from the environment and the input from stdin (-)', async () => {
    const sink = await startSink();
    const context = fakeContext({ stdin: '{"type":"track","userId":"u","event":"E"}\n', env: { BATCHED_ANALYTICS_WRITE_KEY: 'K' } });
    const code = await run(['import', '-', '--endpoint', sink.url], context);
    await sink.close();
    expect(code).toBe(0);
    expect(context.out()).toMatch(/^Import of stdin finished after .*: 1 line\.\n {2}sent {17}1\n/);
    expect(sink.messages).toMatchObject([{ userId: 'u', event: 'E' }]);
  });
});
