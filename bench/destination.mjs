// `npm run bench:destination -- [--against DIR ...] [--deliveries N (20000)] [--rounds N (7)] [--standard-webhooks]`:
// the Webhooks destination's forwarding path alone, in one process: N deliveries handed to
// `WebhookDestination.deliver()` at once (a backlog, as in the collector) to a loopback receiver in
// the same process. Prints the process's CPU µs per delivery (destination + receiver; the receiver's
// share is the same for every build), the median of interleaved rounds, for this build's dist/ and
// each DIR/dist/ (e.g. a worktree of an older commit, built). Less noisy than bench:collector, so
// it shows changes on the forwarding path that the end-to-end figures hide. Every build signs
// `X-Signature`; --standard-webhooks adds a row of this build also sending the Standard Webhooks
// headers (one secret), and its ratio to X-Signature alone. A benchmark, not a test.
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchArgs, integerFlag } from './args.mjs';
import { builtFile } from './builds.mjs';

const args = benchArgs(import.meta.url, {
  against: { type: 'string', multiple: true, default: [] },
  deliveries: { type: 'string', default: '20000' },
  rounds: { type: 'string', default: '7' },
  'standard-webhooks': { type: 'boolean', default: false },
});
const deliveries = integerFlag(args, 'deliveries', 1);
const rounds = integerFlag(args, 'rounds', 1);

const roots = [fileURLToPath(new URL('..', import.meta.url)), ...args.against.map((dir) => path.resolve(dir))];
const loaded = await Promise.all(roots.map(async (root) => ({ root, module: await import(pathToFileURL(builtFile(root, 'dist/webhooks.js')).href) })));
/** A fixed `whsec_` secret of 32 bytes: the figures do not depend on its value. */
const STANDARD = { secrets: [`whsec_${Buffer.alloc(32, 7).toString('base64')}`] };
const builds = [
  { ...loaded[0], name: 'this build', settings: {} },
  ...(args['standard-webhooks'] ? [{ ...loaded[0], name: 'this build, + Standard Webhooks', settings: { standardWebhooks: STANDARD } }] : []),
  ...loaded.slice(1).map((build) => ({ ...build, name: build.root, settings: {} })),
];

const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-length': 0 }).end());
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${receiver.address().port}/in`;
const message = { type: 'track', userId: 'u', event: 'Order Completed', properties: { total: 30, currency: 'EUR' }, timestamp: '2026-01-01T00:00:00.000Z' };

/** CPU µs per delivery of one round; every delivery must succeed. */
async function round({ module, settings }, count) {
  const destination = new module.WebhookDestination({ webhooks: [{ url }], sharedSecret: 'bench', ...settings }, { timeout: 5_000 });
  const started = process.cpuUsage();
  const results = await Promise.all(Array.from({ length: count }, (_, seq) => destination.deliver({ ...message, messageId: `m${seq}` })));
  const cpu = process.cpuUsage(started);
  await destination.close();
  const failed = results.filter((result) => !result.delivered).length;
  if (failed > 0) throw new Error(`${failed} of ${count} deliveries failed`);
  return (cpu.user + cpu.system) / count;
}

for (const build of builds) await round(build, Math.min(deliveries, 3_000)); // warm up
const samples = builds.map(() => []);
for (let r = 0; r < rounds; r++) for (const [index, build] of builds.entries()) samples[index].push(await round(build, deliveries));
receiver.close();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`\n${deliveries.toLocaleString('en-US')} deliveries at once, median of ${rounds} rounds, Node ${process.version}\n`);
console.log('| build | CPU µs/delivery | ÷ this build |\n|---|---:|---:|');
const first = median(samples[0]);
builds.forEach((build, index) => {
  const value = median(samples[index]);
  console.log(`| ${build.name} | ${value.toFixed(1)} | ${(value / first).toFixed(2)}× |`);
});
