// `npm run bench:collector -- --ceiling`: the least a collector can do, as a yardstick for the real
// one on the same machine in the same run. Started like `serve` (it reads `--config` and prints its
// URL), it answers each batch at once and forwards every message with one undici request over 64
// keep-alive connections to the source's last webhook URL: no journal, no validation, no signature,
// no retry, no live page. What it reaches is what one HTTP request per message allows here.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Agent, request } from 'undici';

const CONNECTIONS = 64;
const args = process.argv.slice(2);
const config = JSON.parse(readFileSync(args[args.indexOf('--config') + 1], 'utf8'));
const url = config.sources[0].destinations.Webhooks.webhooks.at(-1).url;
const dispatcher = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 4_000 });
const waiting = [];
let inProgress = 0;

async function forward(body) {
  if (inProgress >= CONNECTIONS) await new Promise((resolve) => waiting.push(resolve));
  inProgress += 1;
  try {
    const response = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher });
    await response.body.dump();
  } finally {
    inProgress -= 1;
    waiting.shift()?.();
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const { batch } = JSON.parse(Buffer.concat(chunks).toString());
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
    for (const message of batch) void forward(JSON.stringify(message));
  });
});
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
