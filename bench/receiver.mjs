// The collector benchmark's webhook receiver: a child process (forked by bench/collector.mjs) with
// three loopback servers. The healthy one answers 200 at once and stamps when each message first
// arrived; the remote one does the same after REMOTE_DELAY ms (20), as a receiver across a network
// does; the stalled one reads the request and never answers (the collector's timeout ends it).
// Cheap on purpose: it scans the raw body for `"seq":` instead of parsing it.
import { createServer } from 'node:http';

const MARK = Buffer.from('"seq":');
const clock = () => performance.timeOrigin + performance.now();

/** First arrival time of each message, by its `properties.seq`. */
const arrivals = new Map();
let requests = 0;
let stalledRequests = 0;

function seqOf(body) {
  const at = body.indexOf(MARK);
  if (at === -1) return undefined;
  let end = at + MARK.length;
  while (body[end] >= 0x30 && body[end] <= 0x39) end += 1;
  return Number(body.toString('latin1', at + MARK.length, end));
}

/** Stamps each message's arrival and answers 200, at once or after `delay` ms (a receiver across a network). */
const answering = (delay) =>
  createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      requests += 1;
      const seq = seqOf(Buffer.concat(chunks));
      if (seq !== undefined && !arrivals.has(seq)) arrivals.set(seq, clock());
      const answer = () => res.writeHead(200, { 'content-length': 0 }).end();
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  });
const healthy = answering(0);
const remote = answering(Number(process.env.REMOTE_DELAY ?? 20));
const stalled = createServer((req) => {
  stalledRequests += 1;
  req.resume();
});

const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
const [healthyPort, stalledPort, remotePort] = await Promise.all([listen(healthy), listen(stalled), listen(remote)]);
const url = (port) => `http://127.0.0.1:${port}/in`;
process.send({ type: 'listening', healthy: url(healthyPort), stalled: url(stalledPort), remote: url(remotePort) });

process.on('message', (message) => {
  if (message.type === 'count') process.send({ type: 'count', count: arrivals.size });
  if (message.type === 'report') process.send({ type: 'report', arrivals: [...arrivals], requests, stalledRequests });
});
process.on('disconnect', () => {
  for (const server of [healthy, stalled, remote]) {
    server.closeAllConnections();
    server.close();
  }
});
