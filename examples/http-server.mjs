// An HTTP server that records a call per request. Calls return at once (no I/O on the request
// path); batches go out in the background. SIGTERM drains the queue before exit.
//
//   npm run build && node examples/http-server.mjs    then    curl -X POST localhost:3000/orders
import http from 'node:http';
import { Analytics } from 'batched-analytics';

const analytics = new Analytics(process.env.WRITE_KEY ?? 'demo-write-key', {
  endpoint: process.env.ANALYTICS_ENDPOINT ?? 'https://api.segment.io',
  context: { app: { name: 'shop', version: '1.4.0' } },
});
analytics.on('error', (error) => console.error('analytics:', error.message));
analytics.on('drop', ({ reason }) => console.warn('analytics: dropped a call:', reason));

const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/orders') {
    const userId = String(req.headers['x-user-id'] ?? 'anonymous-user');
    analytics.track({
      userId,
      event: 'Order Completed',
      properties: { total: 30, currency: 'EUR' },
      context: { ip: req.socket.remoteAddress, userAgent: req.headers['user-agent'] },
    });
    res.writeHead(201).end('ok\n');
    return;
  }
  res.writeHead(404).end();
});
server.listen(3000, () => console.log('listening on http://localhost:3000'));

process.once('SIGTERM', async () => {
  server.close();
  const summary = await analytics.close({ timeout: 10_000 });
  console.log('analytics closed:', summary);
});
