// One SDK run, in a fresh process forked by bench/run.mjs, so that CPU time and peak RSS belong
// to one SDK alone. The configuration arrives as JSON in argv[2]; results leave over IPC.
//   throughput: `events` track calls in one synchronous loop, then close and wait for delivery.
//   outage:     `events` calls spread evenly over `outageMs` while the sink answers 503, then close.
import { orderCompleted } from './workload.mjs';

const config = JSON.parse(process.argv[2]);
const WRITE_KEY = 'bench-write-key';

/** Wall-clock ms with sub-ms resolution, comparable between the benchmark's processes. */
const clock = () => performance.timeOrigin + performance.now();

/**
 * The two SDKs behind one shape: `create(maxQueueSize?)`, `track(client, params)`, `close(client)`
 * resolving with `{ delivered?, failed, dropped? }`, and `onDrop(client, fn)` where supported.
 */
async function load(sdk) {
  if (sdk === 'ours' || sdk === 'baseline') {
    // The baseline is another checkout's build of this client (`--against`), driven the same way.
    const { Analytics } = await import(config.dist ?? new URL('../packages/client/dist/index.js', import.meta.url));
    return {
      create: (maxQueueSize, flushAt = config.flushAt) =>
        new Analytics(WRITE_KEY, {
          endpoint: config.url,
          flushAt,
          flushAfter: config.flushInterval,
          gzip: config.gzip,
          ...(config.spool === undefined ? {} : { spool: config.spool }),
          ...(maxQueueSize === undefined ? {} : { maxQueueSize }),
        }),
      track: (client, params) => client.track(params),
      close: (client) => client.close({ timeout: config.closeTimeout }),
      onDrop: (client, listener) => client.on('drop', (event) => listener(event.message.messageId)),
    };
  }
  if (sdk === 'segment') {
    const { Analytics } = await import('@segment/analytics-node');
    let failed = 0;
    return {
      // Segment has no queue bound (nor gzip).
      create: () => {
        const client = new Analytics({
          writeKey: WRITE_KEY,
          host: config.url,
          path: '/v1/batch',
          flushAt: config.flushAt,
          flushInterval: config.flushInterval,
        });
        client.on('error', () => {
          failed += 1;
        });
        return client;
      },
      track: (client, params) => client.track(params),
      close: async (client) => {
        await client.closeAndFlush({ timeout: config.closeTimeout });
        return { failed };
      },
      onDrop: undefined,
    };
  }
  throw new Error(`client: unknown sdk ${sdk}`);
}

/** Samples RSS every 20 ms while the event loop turns (the synchronous call loop blocks it; maxRSS does not miss it). */
function sampleRss() {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  timer.unref();
  return () => {
    clearInterval(timer);
    return Math.max(peak, process.memoryUsage.rss());
  };
}

async function throughput(sdk) {
  const stopSampling = sampleRss();
  const cpuStart = process.cpuUsage();
  // Ours holds every call (the run measures delivery, not drops); Segment's queue is unbounded.
  const client = sdk.create(config.events);
  const start = clock();
  for (let i = 0; i < config.events; i++) sdk.track(client, orderCompleted(i));
  const called = clock();
  const cpuCalls = process.cpuUsage(cpuStart);
  const outcome = await sdk.close(client);
  const closed = clock();
  const cpu = process.cpuUsage(cpuStart);
  return { start, called, closed, cpu, cpuCalls, outcome, sampledRss: stopSampling() };
}

async function outage(sdk) {
  const stopSampling = sampleRss();
  const cpuStart = process.cpuUsage();
  const client = sdk.create(); // the default maxQueueSize: memory must plateau there
  const dropped = [];
  sdk.onDrop?.(client, (id) => dropped.push(id));
  const rssAt = [];
  const step = Math.ceil(config.events / 10);
  const start = clock();
  process.send({ type: 'started', at: start });
  let made = 0;
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(config.events, Math.ceil(((clock() - start) / config.outageMs) * config.events));
      for (; made < due; made++) {
        sdk.track(client, orderCompleted(made, `outage-${made}`));
        if ((made + 1) % step === 0) rssAt.push({ calls: made + 1, rss: process.memoryUsage.rss() });
      }
      if (made === config.events) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  const called = clock();
  const outcome = await sdk.close(client);
  const closed = clock();
  const cpu = process.cpuUsage(cpuStart);
  return { start, called, closed, cpu, outcome, dropped, rssAt, sampledRss: stopSampling() };
}

/**
 * track() against its floor, in this one process, interleaved in blocks. The floor is what any
 * client must do per call: a `crypto.randomUUID()` for the messageId and `JSON.stringify` of the
 * complete message (the call's own object given `type`, `messageId`, a `timestamp` and
 * `context.library` in place: no copy, no validation, no size check, no queue). Blocks alternate
 * (track then floor, floor then track, ...) so that drift touches both alike; the client sends
 * nothing during the blocks (one batch size for all the calls) and close() sends it all after.
 *
 * A third block, the ceiling, is the floor plus what a bounded queue cannot skip: the UTF-8 byte
 * count (the byte limits need it), a copy of the JSON into a reused off-heap slab, and an entry
 * pushed onto an array. What track() does beyond the ceiling is validation, the copy of the
 * argument, defaults and the flush checks; the ceiling's own ratio says how close any client that
 * holds its queue this way can come to the floor.
 *
 * With `config.heapCeiling`, a process of its own measures the other way to hold a queue against
 * the floor instead: the floor plus an entry keeping the JSON string itself on the V8 heap, every
 * call's kept to the end as the client keeps every call here (no byte count: a flush could count
 * them; no copy). Its own process, because a heap that grows by every call makes the collections
 * of whatever else runs beside it dearer (track()'s ratio rose from about 1.37× to 1.49× in the
 * same process). What it costs besides time is memory: the V8 heap it holds per queued message
 * (`heapBytes`, measured by dropping the entries between two full collections, so this process
 * runs with --expose-gc), beside the bytes the off-heap copy takes (`storeBytes`: the JSON's UTF-8
 * bytes and the newline the client's store adds).
 */
async function floor(sdk) {
  const client = sdk.create(config.events, config.events);
  const block = 1_000;
  const trackTimes = [];
  const floorTimes = [];
  const context = { library: { name: 'batched-analytics', version: '0.1.0' } };
  const timestamp = new Date().toISOString();
  const kept = [];
  /** The floor's work for call `i`: the complete message's JSON. */
  const floorJson = (i) => {
    const message = orderCompleted(i);
    message.type = 'track';
    message.messageId = crypto.randomUUID();
    message.timestamp = timestamp;
    message.context = context;
    return JSON.stringify(message);
  };
  const trackBlock = (from) => {
    const t0 = performance.now();
    for (let i = from; i < from + block; i++) sdk.track(client, orderCompleted(i));
    trackTimes.push(((performance.now() - t0) * 1000) / block);
  };
  const floorBlock = (from) => {
    const t0 = performance.now();
    for (let i = from; i < from + block; i++) {
      kept.push(floorJson(i));
      if (kept.length > 64) kept.length = 0;
    }
    floorTimes.push(((performance.now() - t0) * 1000) / block);
  };
  const ceilingTimes = [];
  const slab = Buffer.allocUnsafeSlow(128 * 1024);
  let slabAt = 0;
  const entries = [];
  const ceilingBlock = (from) => {
    const t0 = performance.now();
    for (let i = from; i < from + block; i++) {
      const json = floorJson(i);
      const bytes = Buffer.byteLength(json);
      if (slab.length - slabAt < bytes) slabAt = 0;
      slabAt += bytes === json.length ? slab.latin1Write(json, slabAt) : slab.write(json, slabAt);
      entries.push({ bytes, callback: undefined, epoch: 0 });
      if (entries.length > 1024) entries.length = 0;
    }
    ceilingTimes.push(((performance.now() - t0) * 1000) / block);
  };
  const heapTimes = [];
  const heapQueue = [];
  let storeBytes = 0;
  const heapBlock = (from) => {
    const t0 = performance.now();
    for (let i = from; i < from + block; i++) {
      const json = floorJson(i);
      heapQueue.push({ json, callback: undefined, epoch: 0 });
    }
    heapTimes.push(((performance.now() - t0) * 1000) / block);
  };
  for (let from = 0; from + block <= config.events; from += block) {
    // The floor in the middle, the others on either side by turns.
    const first = (from / block) % 2 === 0;
    if (config.heapCeiling) {
      for (const run of first ? [heapBlock, floorBlock] : [floorBlock, heapBlock]) run(from);
    } else {
      (first ? trackBlock : ceilingBlock)(from);
      floorBlock(from);
      (first ? ceilingBlock : trackBlock)(from);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  await sdk.close(client);
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  // Each block against the floor block beside it: what the machine's load does to one does to the other.
  const against = (times) => median(times.map((time, i) => time / floorTimes[i]));
  if (!config.heapCeiling) {
    return { trackUs: median(trackTimes), floorUs: median(floorTimes), ratio: against(trackTimes), ceilingUs: median(ceilingTimes), ceilingRatio: against(ceilingTimes) };
  }
  // Before anything reads the strings: counting their bytes would flatten each into a copy.
  const maxRss = process.resourceUsage().maxRSS * 1024;
  globalThis.gc();
  const holding = process.memoryUsage().heapUsed;
  const queued = heapQueue.length;
  heapQueue.length = 0;
  globalThis.gc();
  const heapBytes = (holding - process.memoryUsage().heapUsed) / queued;
  // The same calls' JSON again (only their random messageIds differ, all as long).
  for (let i = 0; i < queued; i++) storeBytes += Buffer.byteLength(floorJson(i)) + 1;
  return { floorUs: median(floorTimes), heapUs: median(heapTimes), heapRatio: against(heapTimes), heapBytes, storeBytes: storeBytes / queued, maxRss };
}

const sdk = await load(config.sdk);
const result = config.scenario === 'outage' ? await outage(sdk) : config.scenario === 'floor' ? await floor(sdk) : await throughput(sdk);
// maxRSS is in KiB: the kernel's high-water mark for the whole process, missed samples included.
// A result's own maxRss wins: the heap ceiling's is taken before its last steps copy its strings.
const report = { type: 'result', maxRss: process.resourceUsage().maxRSS * 1024, ...result };
process.send(report, () => process.exit(0));
