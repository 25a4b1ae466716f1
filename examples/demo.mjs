// `npm start`: the whole pipeline on this machine, no account needed.
//
// Starts a webhook receiver that verifies X-Signature, starts the local collector (the real CLI,
// `batched-analytics serve`) pointed at it, sends one call of each type with the client, syncs an
// audience and requests a deletion, then prints what was batched, forwarded and verified.
// Exits 0 when every expected webhook arrived with a valid signature, 1 otherwise.
//
//   npm run build && node examples/demo.mjs
//   DEMO_RECEIVER_SECRET=wrong node examples/demo.mjs   # a receiver with the wrong secret: exit 1
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Analytics } from 'batched-analytics';
import { verifySignature } from 'batched-analytics/webhooks';

const SECRET = 'demo-shared-secret';
const RECEIVER_SECRET = process.env.DEMO_RECEIVER_SECRET ?? SECRET;
const WRITE_KEY = 'wk_demo';
const ADMIN_TOKEN = 'demo-admin-token';
const CLI = fileURLToPath(new URL('../packages/client/dist/cli.js', import.meta.url));

// 1. A webhook receiver: checks each request's signature over the raw body, as a real one would.
const received = [];
let onReceived = () => {};
const receiver = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const verified = verifySignature(raw, req.headers['x-signature'], RECEIVER_SECRET);
    received.push({ body: JSON.parse(raw.toString('utf8')), verified });
    res.writeHead(verified ? 200 : 401).end();
    onReceived();
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${receiver.address().port}/hooks`;

// 2. The collector, configured with one source whose Webhooks destination is that receiver.
const dir = await mkdtemp(path.join(tmpdir(), 'batched-analytics-demo-'));
const config = path.join(dir, 'collector.json');
await writeFile(
  config,
  JSON.stringify({
    adminToken: ADMIN_TOKEN,
    sources: [{ name: 'demo', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: hookUrl }], sharedSecret: SECRET } } }],
    // No load balancer to wait for: stop at once.
    server: { drainDelay: 0 },
  }),
);
const collector = spawn(process.execPath, [CLI, 'serve', '--config', config, '--port', '0', '--data-dir', path.join(dir, 'data')], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
// The collector's own report (data dir, sources) is shown only if something goes wrong.
let collectorLog = '';
collector.stderr.on('data', (chunk) => (collectorLog += chunk));
const endpoint = await new Promise((resolve, reject) => {
  createInterface({ input: collector.stdout }).once('line', resolve);
  collector.once('exit', (code) => reject(new Error(`the collector exited with code ${code}`)));
});
console.log(`collector:  ${endpoint} (batched-analytics serve, journal in a temporary data dir)`);
console.log(`receiver:   ${hookUrl} (verifies X-Signature with the shared secret)`);

let ok = false;
try {
  // 3. The client: one call of each type, sent as one batch.
  const analytics = new Analytics(WRITE_KEY, { endpoint, flushAt: 6 });
  analytics.on('flush', ({ count, bytes, attempts, error }) =>
    console.log(`batched:    ${count} messages in one request (${bytes} bytes, ${attempts} attempt(s))${error ? `: ${error.message}` : ''}`),
  );
  analytics.identify({ userId: 'user-42', traits: { name: 'Ada', plan: 'pro' } });
  analytics.track({ userId: 'user-42', event: 'Order Completed', properties: { orderId: 'o-1', total: 30 } });
  analytics.page({ userId: 'user-42', name: 'Checkout', properties: { path: '/checkout', title: 'Checkout', url: 'https://shop.example/checkout' } });
  analytics.screen({ userId: 'user-42', name: 'Home', context: { app: { name: 'Shop', version: '1.2.0', build: '120' } } });
  analytics.group({ userId: 'user-42', groupId: 'acme', traits: { name: 'Acme Inc', employees: 120 } });
  analytics.alias({ userId: 'user-42', previousId: 'anon-7' });
  const summary = await analytics.close({ timeout: 10_000 });
  console.log(`client:     ${summary.delivered} delivered to the collector, ${summary.failed} failed`);

  // 4. An audience sync (an identify per member) and a deletion request (a delete notification).
  const audience = await post('/v1/audiences', { authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}` }, {
    name: 'Power Users',
    userIds: ['user-42', 'user-43'],
  });
  console.log(`audience:   "Power Users" -> trait ${audience.trait}: ${audience.joined} joined, ${audience.left} left`);
  const deletion = await post('/v1/deletions', { authorization: `Bearer ${ADMIN_TOKEN}` }, { userId: 'user-43' });
  console.log(`deletion:   ${deletion.notifications} delete notification(s) for user-43`);

  // 5. Wait for every webhook: 6 calls, 2 audience identifies, 1 delete.
  const expected = summary.delivered + audience.joined + audience.left + deletion.notifications;
  await arrivals(expected, 10_000);
  for (const { body, verified } of received) {
    console.log(`forwarded:  ${body.type.padEnd(8)} ${describe(body).padEnd(40)} signature ${verified ? 'verified' : 'INVALID'}`);
  }
  const verified = received.filter((r) => r.verified).length;
  console.log(`verified:   ${verified} of ${expected} webhooks arrived with a valid signature`);
  console.log('next:       npx batched-analytics serve --config examples/collector.json   (then open its URL to watch events live)');
  console.log('            WEBHOOK_SECRET=s3cret PORT=3000 node examples/webhook-receiver.mjs   (its webhook receiver)');
  console.log('            WRITE_KEY=wk_example ANALYTICS_ENDPOINT=http://127.0.0.1:8088 node examples/script.mjs   (send to it)');
  ok = expected === 9 && verified === expected && received.length === expected;
} catch (error) {
  console.error(`demo failed: ${error.message}\n${collectorLog}`);
} finally {
  collector.kill('SIGTERM');
  await new Promise((resolve) => collector.once('exit', resolve));
  receiver.close();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;

async function post(route, headers, body) {
  const res = await fetch(endpoint + route, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${route} answered ${res.status}: ${json.error}`);
  return json;
}

function arrivals(count, timeout) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${received.length} of ${count} webhooks arrived within ${timeout} ms`)), timeout);
    onReceived = () => {
      if (received.length < count) return;
      clearTimeout(timer);
      resolve();
    };
    onReceived();
  });
}

function describe(body) {
  switch (body.type) {
    case 'track': return `${body.userId} "${body.event}"`;
    case 'page': return `${body.userId} ${body.properties.path}`;
    case 'screen': return `${body.userId} ${body.name}`;
    case 'group': return `${body.userId} in ${body.groupId}`;
    case 'alias': return `${body['Previous ID']} -> ${body['User ID']}`;
    case 'identify': return `${body.userId} ${JSON.stringify(body.traits)}`;
    default: return body.userId;
  }
}
