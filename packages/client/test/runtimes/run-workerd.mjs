// The matrix's runner for Cloudflare Workers: the scenario in workerd, through miniflare (which needs
// Node >= 22: run this under node@24). `--compat` turns `nodejs_compat` on; without it the Worker has
// no Node built-in at all.
//   node run-workerd.mjs [--compat] '<setup JSON>'  → prints the scenario's result as one JSON line.
import { Miniflare } from 'miniflare';
import { bundle } from './bundle.mjs';

const compat = process.argv.includes('--compat');
const setup = process.argv.at(-1);
const script = await bundle('./worker.mjs', { format: 'esm', conditions: ['workerd', 'worker', 'import'] });
const mf = new Miniflare({ modules: true, script, compatibilityDate: '2025-09-01', compatibilityFlags: compat ? ['nodejs_compat'] : [] });
try {
  const response = await mf.dispatchFetch(`http://worker.test/?setup=${encodeURIComponent(setup)}`);
  console.log(await response.text());
} finally {
  await mf.dispose();
}
