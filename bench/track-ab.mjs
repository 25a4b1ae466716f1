// `npm run bench:track -- --against DIR`: track() of this checkout's built client and of the client
// built in DIR, in ONE process, in alternating blocks beside the floor (randomUUID + JSON.stringify
// of the complete message, as in bench/client.mjs), so that the machine's load falls on both builds
// alike. Prints the median ratios of neighbouring blocks: each build against the floor, and this
// build against DIR's (below 1: this build is cheaper). Resolves a few per cent on a busy machine,
// where `npm run bench` rounds do not. The sink is bench/sink.mjs, in its own process.
//
//   npm run bench:track -- --against DIR [--events N (200000, per build)] [--block N (1000)]
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { benchArgs, fail, integerFlag } from './args.mjs';
import { builtFile } from './builds.mjs';
import { nextMessage } from './ipc.mjs';
import { orderCompleted } from './workload.mjs';

const args = benchArgs(import.meta.url, {
  against: { type: 'string' },
  events: { type: 'string', default: '200000' },
  block: { type: 'string', default: '1000' },
});
const events = integerFlag(args, 'events', 1);
const block = integerFlag(args, 'block', 1);
if (args.against === undefined) fail('Expected --against DIR, a checkout with a built client');
const theirs = builtFile(args.against, 'dist/index.js');
if (!existsSync(theirs)) fail(`Expected a built checkout in --against ${args.against}: run \`npm run build\` there`);

const sink = fork(new URL('./sink.mjs', import.meta.url), [], { stdio: 'inherit' });
const { port } = await nextMessage(sink, 'listening');
const client = async (dist) =>
  new (await import(dist)).Analytics('bench-write-key', { endpoint: `http://127.0.0.1:${port}`, flushAt: events, maxQueueSize: events });
const ours = await client(new URL('../packages/client/dist/index.js', import.meta.url).href);
const baseline = await client(pathToFileURL(theirs).href);

const context = { library: { name: 'batched-analytics', version: '0.1.0' } };
const timestamp = new Date().toISOString();
const kept = [];
const work = {
  ours: (i) => ours.track(orderCompleted(i)),
  baseline: (i) => baseline.track(orderCompleted(i)),
  floor: (i) => {
    const message = orderCompleted(i);
    message.type = 'track';
    message.messageId = crypto.randomUUID();
    message.timestamp = timestamp;
    message.context = context;
    kept.push(JSON.stringify(message));
    if (kept.length > 64) kept.length = 0;
  },
};
const times = { ours: [], baseline: [], floor: [] };
for (let from = 0; from + block <= events; from += block) {
  // The floor in the middle, the two builds on either side by turns.
  const order = (from / block) % 2 === 0 ? ['ours', 'floor', 'baseline'] : ['baseline', 'floor', 'ours'];
  for (const who of order) {
    const t0 = performance.now();
    for (let i = from; i < from + block; i++) work[who](i);
    times[who].push(((performance.now() - t0) * 1000) / block);
  }
  await new Promise((resolve) => setImmediate(resolve));
}
await Promise.all([ours.close(), baseline.close()]);
sink.disconnect();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ratio = (a, b) => median(times[a].map((time, i) => time / times[b][i])).toFixed(3);
console.log(`${times.floor.length} block triples of ${block} calls; floor ${median(times.floor).toFixed(2)} µs/call`);
console.log(`track() : floor   this build ${ratio('ours', 'floor')}×   ${args.against} ${ratio('baseline', 'floor')}×`);
console.log(`track() this build : ${args.against}   ${ratio('ours', 'baseline')}×`);
