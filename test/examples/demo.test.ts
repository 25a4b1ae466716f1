// `npm start` runs examples/demo.mjs after the build: the whole pipeline on this machine.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

it('the demo batches each call type, and every webhook arrives with a verified signature', async () => {
  const { stdout } = await run(process.execPath, ['examples/demo.mjs'], { cwd: root });
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
