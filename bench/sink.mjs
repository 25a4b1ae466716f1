// The benchmark's collection endpoint: a child process (forked by bench/run.mjs) that accepts
// POST /v1/batch on 127.0.0.1, counts requests, bytes and messageIds, and answers
// `{"success":true}`. It must stay cheaper than the clients it measures, so it never parses a
// body: it scans the raw bytes for `"messageId":"` (JSON.stringify writes keys without spaces and
// a messageId holds no quote). Controlled over IPC: `expect`, `status`, `stats`, `ids`.
import { createServer } from 'node:http';
import { gunzip } from 'node:zlib';

const MARK = Buffer.from('"messageId":"');
const QUOTE = 0x22;
const OK_BODY = '{"success":true}';
const UNAVAILABLE_BODY = '{"message":"Service unavailable (benchmark outage)"}';

/** Wall-clock ms with sub-ms resolution, comparable between the benchmark's processes. */
const clock = () => performance.timeOrigin + performance.now();

/** Status answered to every POST: 200, or e.g. 503 during the outage scenario. */
let status = 200;
/** Distinct ids after which `doneAt` is stamped; 0 when no count is expected. */
let expected = 0;
let doneAt;
const ids = new Set();
let idsTotal = 0;
let requests = 0;
/** Body bytes as received on the wire (compressed when gzip). */
let bodyBytes = 0;
let connections = 0;
let peakConnections = 0;
/** Requests per whole second of the clock, by answered status: `{ second: { 200: n, 503: n } }`. */
const perSecond = new Map();
let failures = 0;

function collect(buffer) {
  let at = buffer.indexOf(MARK);
  while (at !== -1) {
    const start = at + MARK.length;
    const end = buffer.indexOf(QUOTE, start);
    // toString copies: a slice of one big string would keep every body alive.
    const id = buffer.toString('latin1', start, end);
    idsTotal += 1;
    if (!ids.has(id)) {
      ids.add(id);
      if (ids.size === expected) doneAt = clock();
    }
    at = buffer.indexOf(MARK, end);
  }
}

function answer(res, code, body) {
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function count(code) {
  const second = Math.floor(clock() / 1000);
  let bucket = perSecond.get(second);
  if (bucket === undefined) {
    bucket = {};
    perSecond.set(second, bucket);
  }
  bucket[code] = (bucket[code] ?? 0) + 1;
}

const server = createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
  if (req.method !== 'POST') {
    answer(res, 404, '{"message":"Not found"}');
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    chunks.push(chunk);
    size += chunk.length;
  });
  req.on('end', () => {
    requests += 1;
    bodyBytes += size;
    const code = status;
    count(code);
    if (code !== 200) {
      answer(res, code, UNAVAILABLE_BODY);
      return;
    }
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
    if (req.headers['content-encoding'] !== 'gzip') {
      collect(body);
      answer(res, 200, OK_BODY);
      return;
    }
    gunzip(body, (error, plain) => {
      if (error) {
        failures += 1;
        answer(res, 400, '{"message":"Bad gzip body"}');
        return;
      }
      collect(plain);
      answer(res, 200, OK_BODY);
    });
  });
});
server.on('connection', (socket) => {
  connections += 1;
  if (connections > peakConnections) peakConnections = connections;
  socket.on('close', () => {
    connections -= 1;
  });
});

process.on('message', (command) => {
  switch (command.type) {
    case 'expect':
      expected = command.count;
      break;
    case 'status':
      status = command.status;
      process.send({ type: 'status', status, at: clock() });
      break;
    case 'stats':
      process.send({
        type: 'stats',
        requests,
        bodyBytes,
        idsTotal,
        distinct: ids.size,
        doneAt,
        peakConnections,
        failures,
        cpu: process.cpuUsage(),
        perSecond: [...perSecond].map(([second, bucket]) => ({ second, ...bucket })),
      });
      break;
    case 'ids':
      process.send({ type: 'ids', ids: [...ids] });
      break;
    default:
      throw new Error(`sink: unknown command ${JSON.stringify(command)}`);
  }
});
process.on('disconnect', () => process.exit(0));

// A deep backlog: @segment/analytics-node opens one connection per pending batch.
server.listen({ host: '127.0.0.1', port: 0, backlog: 65_535 }, () => {
  process.send({ type: 'listening', port: server.address().port });
});
