// `npm run bench:collector -- --ceiling`: the least a collector can do, as a yardstick for the real
// one on the same machine in the same run. Started like `serve` (it reads `--config` and prints its
// URL), it forwards every message with one undici request over 64 keep-alive connections to the
// source's last webhook URL: no validation, no signature, no retry, no live page. What it reaches
// is what one HTTP request per message allows here.
//
// With `--durable` (the "durable bare forwarder" column) it also does the least that answering 200
// only for what survives a crash takes: each batch's messages are appended to a file in
// `--data-dir` (one line each) and fsynced before the answer, and each delivery appends a line
// saying so (grouped, not fsynced), as any journal must; nothing is ever read back or compacted.
// Without it, it answers each batch at once and keeps nothing.
//
// With `--lean` (the "lean collector" column) it does, durably, the work per message that the
// collector's contract asks for, each step as plainly as it can be done, with the client's own
// code where the collector uses it: the write key checked; the body decoded as strict UTF-8; each
// message's nesting and size checked, validated (`validateMessage`) and enriched (`receivedAt`,
// `originalTimestamp`, the corrected `timestamp`); de-duplicated by `messageId` (in memory); its
// webhook body fixed (`prepareWebhook`); its delivery (the message and the webhook, with an id)
// journaled as the collector's acceptance line holds it; sent with the collector's headers; and its
// record (the attempt's time, URL, status and duration) journaled with its outcome. What it leaves
// out is what the collector adds beyond that contract: the live page and its history, metrics and
// logs, claims, leases and the pending index that let several processes share a store and a
// restart resume, retries, breakers and per-URL lanes (it only sends to the last URL, as the bare
// forwarder does), the de-duplication's files, config reloads.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { isoOf, LIMITS, prepareWebhook, USER_AGENT, validateMessage } from 'batched-analytics/internal';
import { Agent, request } from 'undici';

const CONNECTIONS = 64;
/** As the collector's ingestion refuses: deeper nesting answers 400. */
const MAX_DEPTH = 64;
const args = process.argv.slice(2);
const config = JSON.parse(readFileSync(args[args.indexOf('--config') + 1], 'utf8'));
const source = config.sources[0];
const url = source.destinations.Webhooks.webhooks.at(-1).url;
const lean = args.includes('--lean');
// The lean collector's requests time out as the collector's do (`delivery.timeout`).
const timeout = config.delivery?.timeout ?? 5_000;
const dispatcher = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 4_000, ...(lean ? { headersTimeout: timeout, bodyTimeout: timeout } : {}) });
const durable = lean || args.includes('--durable');
const dataDir = args[args.indexOf('--data-dir') + 1];
if (durable) await mkdir(dataDir, { recursive: true });
const journal = durable ? await open(path.join(dataDir, 'bare-journal.ndjson'), 'a') : undefined;
const headers = lean ? { 'content-type': 'application/json', 'user-agent': USER_AGENT } : { 'content-type': 'application/json' };
const authorization = `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`;
const UTF8 = new TextDecoder('utf-8', { fatal: true });
/** The de-duplication: each messageId accepted, with when. */
const seen = new Map();
const waiting = [];
let inProgress = 0;

/** Delivery lines waiting for the next grouped write; a write runs at a time. */
let settled = [];
let writing = false;
async function writeSettled() {
  if (writing || settled.length === 0) return;
  writing = true;
  while (settled.length > 0) {
    const lines = settled.join('');
    settled = [];
    await journal.write(lines);
  }
  writing = false;
}

/** Acceptances in the order they came, written and fsynced together (a group commit). */
let accepting = [];
let committing = false;
async function commit() {
  if (committing) return;
  committing = true;
  while (accepting.length > 0) {
    const group = accepting;
    accepting = [];
    await journal.write(group.map((item) => item.lines).join(''));
    await journal.datasync();
    for (const item of group) item.done();
  }
  committing = false;
}

/** Whether `root` nests objects and arrays deeper than MAX_DEPTH, found without recursion. */
function tooDeep(root) {
  const stack = [root, 1];
  while (stack.length > 0) {
    const depth = stack.pop();
    const value = stack.pop();
    if (depth > MAX_DEPTH) return true;
    for (const key in value) {
      const child = value[key];
      if (child !== null && typeof child === 'object') stack.push(child, depth + 1);
    }
  }
  return false;
}

/** A batch's messages checked, enriched and de-duplicated, each as the delivery the collector journals. */
function deliveriesOf(batch, sentAt, receivedAt) {
  const receivedIso = isoOf(receivedAt);
  const sent = sentAt === undefined ? undefined : Date.parse(sentAt);
  const deliveries = [];
  for (const input of batch) {
    if (tooDeep(input) || Buffer.byteLength(JSON.stringify(input)) > LIMITS.messageBytes) throw new Error('refused');
    const message = validateMessage(input);
    message.receivedAt = receivedIso;
    if (input.timestamp === undefined) message.timestamp = receivedIso;
    else {
      message.originalTimestamp = message.timestamp;
      if (sent !== undefined) message.timestamp = isoOf(receivedAt - (sent - Date.parse(message.timestamp)));
    }
    if (seen.has(message.messageId)) continue;
    seen.set(message.messageId, receivedAt);
    deliveries.push({ id: randomUUID(), source: source.name, message, webhook: prepareWebhook(message, receivedAt) });
  }
  return deliveries;
}

async function forward(body, id) {
  if (inProgress >= CONNECTIONS) await new Promise((resolve) => waiting.push(resolve));
  inProgress += 1;
  try {
    const at = Date.now();
    const response = await request(url, { method: 'POST', body, headers, dispatcher });
    await response.body.dump();
    if (lean) {
      const answer = { at, attempt: 1, url, durationMs: Date.now() - at, status: response.statusCode };
      settled.push(`${JSON.stringify({ op: 'settle', id, outcome: 'delivered', settledAt: Date.now(), log: [answer] })}\n`);
      void writeSettled();
    } else if (durable) {
      settled.push(`{"settled":${JSON.stringify(id)}}\n`);
      void writeSettled();
    }
  } finally {
    inProgress -= 1;
    waiting.shift()?.();
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    if (lean) {
      if (req.headers.authorization !== authorization) return res.writeHead(401).end();
      const { batch, sentAt } = JSON.parse(UTF8.decode(Buffer.concat(chunks)));
      const deliveries = deliveriesOf(batch, sentAt, Date.now());
      const lines = `{"op":"accept","deliveries":[${deliveries.map((delivery) => JSON.stringify(delivery)).join(',')}]}\n`;
      await new Promise((done) => {
        accepting.push({ lines, done });
        void commit();
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
      for (const { id, webhook } of deliveries) void forward(webhook.body, id);
      return;
    }
    const { batch } = JSON.parse(Buffer.concat(chunks).toString());
    const bodies = batch.map((message) => JSON.stringify(message));
    if (durable) {
      await new Promise((done) => {
        accepting.push({ lines: bodies.map((body) => `${body}\n`).join(''), done });
        void commit();
      });
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
    bodies.forEach((body, index) => void forward(body, batch[index].messageId));
  });
});
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
