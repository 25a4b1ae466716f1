// The matrix's runner for Cloudflare Workers: the scenario in workerd, through miniflare (which needs
// Node >= 22: run this under node@24). `nodejs_compat` is on, as the README asks of users.
//   node run-workerd.mjs '<setup JSON>'  → prints the scenario's result as one JSON line.
import { Miniflare } from 'miniflare';
import { bundle } from './bundle.mjs';

const script = await bundle('./worker.mjs', { format: 'esm', conditions: ['workerd', 'worker', 'import'] });
const mf = new Miniflare({ modules: true, script, compatibilityDate: '2025-09-01', compatibilityFlags: ['nodejs_compat'] });
try {
  const response = await mf.dispatchFetch(`http://worker.test/?setup=${encodeURIComponent(process.argv[2])}`);
  console.log(await response.text());
} finally {
  await mf.dispose();
}
