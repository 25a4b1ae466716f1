import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url);

// Runs the built package (`npm run build` first), resolved by name through the exports map as an
// installed package would be. Both entries must share one copy of each error class.
const check = (load: string) => `${load}
  let error;
  try { new w.WebhookDestination({ webhooks: [] }); } catch (e) { error = e; }
  console.log(typeof w.verifySignature, error instanceof a.ConfigError, w.ConfigError === a.ConfigError);`;

it.each([
  ['require', check(`const w = require('batched-analytics/webhooks'); const a = require('batched-analytics');`), []],
  ['import', check(`const w = await import('batched-analytics/webhooks'); const a = await import('batched-analytics');`), ['--input-type=module']],
])('batched-analytics/webhooks loads with %s', async (_, code, flags) => {
  const { stdout } = await run(process.execPath, [...flags, '-e', code], { cwd: root });
  expect(stdout.trim()).toBe('function true true');
});
