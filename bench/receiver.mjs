// The collector benchmark's webhook receiver: a child process (forked by bench/collector.mjs) with
// four loopback servers. The healthy one answers 200 at once and stamps when each message first
// arrived; the remote one does the same after REMOTE_DELAY ms (20), as a receiver across a network
// does; the stalled one reads the request and never answers (the collector's timeout ends it); the
// outage one answers 503 until it is told 'up', then as the healthy one. A message answered 200
// more than once is counted as a duplicate.
// Cheap on purpose: it scans the raw body for `"seq":` instead of parsing it.
import { createServer } from 'node:http';

const MARK = Buffer.from('"seq":');
const clock = () => performance.timeOrigin + performance.now();

/** First arrival time of each message, by its `properties.seq`. */
const arrivals = new Map();
let requests = 0;
let stalledRequests = 0;
/** Requests for a message already answered 200. */
let duplicates = 0;
/** Whether the outage server is back. */
let up = false;

function seqOf(body) {
  const at = body.indexOf(MARK);
  if (at === -1) return undefined;
  let end = at + MARK.length;
  while (body[end] >= 0x30 && body[end] <= 0x39) end += 1;
  return Number(body.toString('latin1', at + MARK.length, end));
}

/**
 * Stamps each message's arrival and answers 200, at once or after `delay` ms (a receiver across a
 * network); answers 503 instead while `down()`.
 */
const answering = (delay, down = () => false) =>
  createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      requests += 1;
      if (down()) return void res.writeHead(503, { 'content-length': 0 }).end();
      const seq = seqOf(Buffer.concat(chunks));
      if (seq !== undefined && arrivals.has(seq)) duplicates += 1;
      else if (seq !== undefined) arrivals.set(seq, clock());
      const answer = () => res.writeHead(200, { 'content-length': 0 }).end();
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  });
const healthy = answering(0);
const remote = answering(Number(process.env.REMOTE_DELAY ?? 20));
const outage = answering(0, () => !up);
const stalled = createServer((req) => {
  stalledRequests += 1;
  req.resume();
});

const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
const [healthyPort, stalledPort, remotePort, outagePort] = await Promise.all([listen(healthy), listen(stalled), listen(remote), listen(outage)]);
const url = (port) => `http://127.0.0.1:${port}/in`;
process.send({ type: 'listening', healthy: url(healthyPort), stalled: url(stalledPort), remote: url(remotePort), outage: url(outagePort) });

process.on('message', (message) => {
  if (message.type === 'count') process.send({ type: 'count', count: arrivals.size });
  if (message.type === 'report') process.send({ type: 'report', arrivals: [...arrivals], requests, stalledRequests, duplicates });
  if (message.type === 'up') {
    up = true;
    process.send({ type: 'up', at: clock() });
  }
});
process.on('disconnect', () => {
  for (const server of [healthy, stalled, remote, outage]) {
    server.closeAllConnections();
    server.close();
  }
});
