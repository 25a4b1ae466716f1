// A webhook receiver on plain `node:http` that accepts only requests signed with the shared secret
// (examples/collector.json sends to it with the secret s3cret).
//
//   npm run build && WEBHOOK_SECRET=s3cret PORT=3000 node examples/webhook-receiver.mjs
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { SIGNATURE_HEADER, verifySignature } from 'batched-analytics/webhooks';

/** Webhook bodies are small (a message is at most 32 KB); refuse anything far larger. */
const MAX_BODY_BYTES = 1_000_000;

/**
 * Reads the body exactly as it was sent. The signature covers these bytes: verify them before
 * parsing, because JSON parsed and serialised again need not give the same bytes back.
 */
async function readRawBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * A server that verifies `X-Signature`, then hands each body to `onEvent`. A bad signature gets
 * 401, which the destination does not retry; a good one gets 200 at once (the destination waits
 * 5 seconds at most), so do slow work after answering.
 * @param {string} secret
 * @param {(body: import('batched-analytics/webhooks').WebhookBody) => void} onEvent
 * @returns {import('node:http').Server}
 */
export function createWebhookReceiver(secret, onEvent) {
  return createServer(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    let raw;
    try {
      raw = await readRawBody(req);
    } catch {
      res.writeHead(413).end();
      return;
    }
    if (!verifySignature(raw, req.headers[SIGNATURE_HEADER], secret)) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('invalid signature');
      return;
    }
    res.writeHead(200).end();
    onEvent(JSON.parse(raw.toString('utf8')));
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    console.error('Set WEBHOOK_SECRET to the destination’s sharedSecret.');
    process.exit(2);
  }
  const port = Number(process.env.PORT ?? 3000);
  const server = createWebhookReceiver(secret, (body) => console.log(JSON.stringify(body)));
  server.listen(port, '127.0.0.1', () => console.log(`Receiving webhooks on http://127.0.0.1:${server.address().port}/`));
}
