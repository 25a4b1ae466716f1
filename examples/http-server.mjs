// An HTTP server that records a call per request. Calls return at once (no I/O on the request
// path); batches go out in the background. Ctrl-C (SIGINT) or SIGTERM stops taking requests and
// drains the queue before exit, which is 1 when a call was not delivered.
//
// Run it against the local collector (in another terminal: `npx batched-analytics serve --config
// examples/collector.json`, which listens on http://127.0.0.1:8088 and knows wk_example):
//
//   npm run build && WRITE_KEY=wk_example ANALYTICS_ENDPOINT=http://127.0.0.1:8088 PORT=3001 node examples/http-server.mjs
//   then: curl -X POST -H 'X-User-Id: u1' localhost:3001/orders    (each request is one track call)
//
// PORT=0 picks a free port; the line "listening on URL" says which.
import http from 'node:http';
import { Analytics } from 'batched-analytics';
import { settingsFromEnv } from './settings.mjs';

const { writeKey, endpoint } = settingsFromEnv();
const port = Number(process.env.PORT ?? 3001);
const analytics = new Analytics(writeKey, {
  endpoint,
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
server.listen(port, () => console.log(`listening on http://localhost:${server.address().port}`));

async function stop() {
  server.close();
  const summary = await analytics.close({ timeout: 10_000 });
  console.log('analytics closed:', summary);
  process.exitCode = summary.failed + summary.dropped > 0 ? 1 : 0;
}
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
