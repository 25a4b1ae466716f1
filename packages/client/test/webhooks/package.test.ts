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

it.each([
  ['require', `const v = require('batched-analytics/webhooks/verify');`, []],
  ['import', `const v = await import('batched-analytics/webhooks/verify');`, ['--input-type=module']],
])('batched-analytics/webhooks/verify loads with %s and checks a signature', async (_, load, flags) => {
  const code = `${load}
    const { signBody } = require('batched-analytics/webhooks');
    const good = signBody('{"a":1}', 'k');
    Promise.all([v.verifySignatureAsync('{"a":1}', good, 'k'), v.verifySignatureAsync('{"a":2}', good, 'k')])
      .then((answers) => console.log(v.SIGNATURE_HEADER, answers.join(' ')));`;
  const prelude = flags.length > 0 ? `import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/');` : '';
  const { stdout } = await run(process.execPath, [...flags, '-e', prelude + code], { cwd: root });
  expect(stdout.trim()).toBe('x-signature true false');
});
