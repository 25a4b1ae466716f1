// `npm start` runs examples/demo.mjs after the build: the whole pipeline on this machine.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { startCollector, stopAll, tempDir } from '../helpers/collector.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

afterAll(stopAll);

/** One run of `node examples/demo.mjs`, shared by the tests that read its output. */
let demo: Promise<{ stdout: string; stderr: string }> | undefined;
const runDemo = () => (demo ??= run(process.execPath, ['examples/demo.mjs'], { cwd: root }));

it('the demo batches each call type, and every webhook arrives with a verified signature', async () => {
  const { stdout } = await runDemo();
  expect(stdout).toMatch(/^collector: {2}http:\/\/127\.0\.0\.1:\d+ /m);
  expect(stdout).toMatch(/^batched: {4}6 messages in one request \(\d+ bytes, 1 attempt\(s\)\)$/m);
  expect(stdout).toContain('client:     6 delivered to the collector, 0 failed');
  const forwarded = stdout.split('\n').filter((line) => line.startsWith('forwarded:'));
  expect(forwarded.map((line) => line.split(/\s+/)[1]).sort()).toEqual(['alias', 'delete', 'group', 'identify', 'identify', 'identify', 'page', 'screen', 'track']);
  expect(forwarded.every((line) => line.endsWith('signature verified'))).toBe(true);
  expect(stdout).toContain('verified:   9 of 9 webhooks arrived with a valid signature');
});

it('exits non-zero when a webhook cannot be verified', async () => {
  // The same demo with a receiver secret that does not match: nothing verifies.
  const failing = run(process.execPath, ['examples/demo.mjs'], { cwd: root, env: { ...process.env, DEMO_RECEIVER_SECRET: 'wrong' } });
  await expect(failing).rejects.toMatchObject({ code: 1 });
});

it('ends by suggesting commands that work in a clone: the collector config it names exists and starts', async () => {
  const { stdout } = await runDemo();
  const serve = /npx batched-analytics serve --config (\S+)/.exec(stdout);
  expect(serve).not.toBeNull();
  const { dir, remove } = tempDir();
  try {
    const collector = await startCollector(['--config', path.join(root, serve![1]!), '--port', '0', '--data-dir', dir]);
    expect(collector.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await collector.stop()).toEqual({ code: 0, signal: null });
  } finally {
    remove();
  }
  for (const [, example] of stdout.matchAll(/node (examples\/\S+\.mjs)/g)) expect(existsSync(path.join(root, example!))).toBe(true);
});
