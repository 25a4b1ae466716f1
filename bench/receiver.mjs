// The collector benchmark's webhook receiver: a child process (forked by bench/collector.mjs) with
// five loopback servers. The healthy one answers 200 at once and stamps when each message first
// arrived; the remote one does the same after REMOTE_DELAY ms (20), as a receiver across a network
// does; the stalled one reads the request and never answers (the collector's timeout ends it); the
// outage one answers 503 until it is told 'up', then as the healthy one; the silencing one answers
// as the healthy one until it is told 'silence', then as the stalled one. A message arrives when any
// of them first answers it 200 (a source's URLs share the work: the first 2xx wins); one a URL
// answered 200 more than once is counted as a duplicate.
// Cheap on purpose: it scans the raw body for `"seq":` instead of parsing it.
import { createServer } from 'node:http';

const MARK = Buffer.from('"seq":');
const clock = () => performance.timeOrigin + performance.now();

/** First arrival time of each message at any URL, by its `properties.seq`. */
const arrivals = new Map();
let requests = 0;
let stalledRequests = 0;
/** Whether the silencing server has gone silent, and the requests it has left unanswered since. */
let silent = false;
let silencedRequests = 0;
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
 * network); answers 503 instead while `down()`, and nothing at all while `silenced()`.
 */
const answering = (delay, { down = () => false, silenced = () => false } = {}) => {
  /** The messages this URL answered 200. */
  const answered = new Set();
  return createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      requests += 1;
      if (silenced()) return void (silencedRequests += 1);
      if (down()) return void res.writeHead(503, { 'content-length': 0 }).end();
      const seq = seqOf(Buffer.concat(chunks));
      if (seq !== undefined) {
        if (answered.has(seq)) duplicates += 1;
        answered.add(seq);
        if (!arrivals.has(seq)) arrivals.set(seq, clock());
      }
      const answer = () => res.writeHead(200, { 'content-length': 0 }).end();
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  });
};
const healthy = answering(0);
const remote = answering(Number(process.env.REMOTE_DELAY ?? 20));
const outage = answering(0, { down: () => !up });
const silencing = answering(0, { silenced: () => silent });
const stalled = createServer((req) => {
  stalledRequests += 1;
  req.resume();
});

const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
const [healthyPort, stalledPort, remotePort, outagePort, silencingPort] = await Promise.all([listen(healthy), listen(stalled), listen(remote), listen(outage), listen(silencing)]);
const url = (port) => `http://127.0.0.1:${port}/in`;
process.send({ type: 'listening', healthy: url(healthyPort), stalled: url(stalledPort), remote: url(remotePort), outage: url(outagePort), silencing: url(silencingPort) });

process.on('message', (message) => {
  if (message.type === 'count') process.send({ type: 'count', count: arrivals.size });
  if (message.type === 'report') process.send({ type: 'report', arrivals: [...arrivals], requests, stalledRequests, silencedRequests, duplicates });
  if (message.type === 'up') {
    up = true;
    process.send({ type: 'up', at: clock() });
  }
  if (message.type === 'silence') {
    silent = true;
    process.send({ type: 'silence' });
  }
});
process.on('disconnect', () => {
  for (const server of [healthy, stalled, remote, outage, silencing]) {
    server.closeAllConnections();
    server.close();
  }
});
