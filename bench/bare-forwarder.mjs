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
import { readFileSync } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { Agent, request } from 'undici';

const CONNECTIONS = 64;
const args = process.argv.slice(2);
const config = JSON.parse(readFileSync(args[args.indexOf('--config') + 1], 'utf8'));
const url = config.sources[0].destinations.Webhooks.webhooks.at(-1).url;
const dispatcher = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 4_000 });
const durable = args.includes('--durable');
const dataDir = args[args.indexOf('--data-dir') + 1];
if (durable) await mkdir(dataDir, { recursive: true });
const journal = durable ? await open(path.join(dataDir, 'bare-journal.ndjson'), 'a') : undefined;
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

async function forward(body, id) {
  if (inProgress >= CONNECTIONS) await new Promise((resolve) => waiting.push(resolve));
  inProgress += 1;
  try {
    const response = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher });
    await response.body.dump();
    if (durable) {
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
