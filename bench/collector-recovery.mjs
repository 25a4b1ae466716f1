// `node bench/collector-recovery.mjs`: how fast the collector catches up after a receiver's outage.
// A real `batched-analytics serve` (the built dist/cli.js, or --cli another build's) forwards to a
// receiver in this process that answers 503 while "down". N messages are sent during the outage,
// which lasts --outage-ms more once they are all accepted; then the receiver answers 200, and this
// prints the time to the first delivery and to the last. A benchmark, not a test.
//
//   node bench/collector-recovery.mjs [--messages N (100000)] [--outage-ms MS (20000)]
//                                     [--delivery JSON (the config's "delivery", default {})]
//                                     [--cli PATH (dist/cli.js)] [--run-timeout S (600)]
//                                     [--store local (the queue in a throwaway PostgreSQL cluster, as
//                                      bench/collector.mjs --store local; default: the journal)]
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freshDatabase, openServer } from './postgres.mjs';

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '100000' },
    'outage-ms': { type: 'string', default: '20000' },
    delivery: { type: 'string', default: '{}' },
    cli: { type: 'string', default: fileURLToPath(new URL('../dist/cli.js', import.meta.url)) },
    'run-timeout': { type: 'string', default: '600' },
    store: { type: 'string' },
  },
});
const total = Number(args.messages);
const BATCH = 500;

let down = true;
let back = 0;
let first = 0;
let last = 0;
let refused = 0;
const delivered = new Set();
const receiver = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    if (down) {
      refused += 1;
      return void res.writeHead(503).end();
    }
    const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (!delivered.has(messageId)) {
      delivered.add(messageId);
      last = performance.now();
      first ||= last;
    }
    res.writeHead(200).end();
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));

const dir = mkdtempSync(path.join(tmpdir(), 'collector-recovery-'));
const config = path.join(dir, 'collector.json');
writeFileSync(
  config,
  JSON.stringify({
    sources: [{ name: 'web', writeKey: 'wk', destinations: { Webhooks: { webhooks: [{ url: `http://127.0.0.1:${receiver.address().port}/hook` }] } } }],
    delivery: JSON.parse(args.delivery),
  }),
);
const server = args.store === undefined ? undefined : await openServer(args.store);
const store = server === undefined ? ['--data-dir', path.join(dir, 'data')] : ['--store', (await freshDatabase(server.url)).url];
const child = spawn(process.execPath, [args.cli, 'serve', '--config', config, '--port', '0', ...store], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const timeout = setTimeout(() => {
  console.error(`run timed out: ${delivered.size} of ${total} delivered`);
  child.kill('SIGKILL');
  void server?.stop().finally(() => process.exit(1));
  if (server === undefined) process.exit(1);
}, Number(args['run-timeout']) * 1000);
try {
  const url = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before printing its URL`)));
    createInterface({ input: child.stdout }).once('line', resolve);
  });
  const auth = `Basic ${Buffer.from('wk:').toString('base64')}`;
  let next = 0;
  const send = async () => {
    for (let b = next++; b * BATCH < total; b = next++) {
      const batch = Array.from({ length: Math.min(BATCH, total - b * BATCH) }, (_, i) => ({ type: 'track', userId: 'u', event: 'E', messageId: `m-${b * BATCH + i}` }));
      const res = await fetch(`${url}/v1/batch`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth }, body: JSON.stringify({ batch }) });
      if (res.status !== 200) throw new Error(`batch ${b}: ${res.status}`);
    }
  };
  await Promise.all([send(), send(), send(), send()]);
  await new Promise((resolve) => setTimeout(resolve, Number(args['outage-ms'])));
  down = false;
  back = performance.now();
  while (delivered.size < total) await new Promise((resolve) => setTimeout(resolve, 50));
  const seconds = (ms) => Number((ms / 1000).toFixed(2));
  console.log(
    JSON.stringify({
      messages: total,
      refusedDuringOutage: refused,
      firstDeliveryAfterRecovery: seconds(first - back),
      drainedAfterRecovery: seconds(last - back),
      drainRate: Math.round(total / ((last - first) / 1000)),
    }),
  );
} finally {
  clearTimeout(timeout);
  if (child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  receiver.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}
