// `npm run bench`: batched-analytics (the built dist/) against @segment/analytics-node on the same
// workload, each SDK run in its own fresh process, the sink in another (bench/sink.mjs), loopback
// only. Prints Markdown tables of medians with the ratio ours/theirs. A benchmark, not a test.
//
//   npm run bench -- [--scenario throughput|outage|all (all)] [--events N (100000)]
//                    [--flush-at N (20)] [--flush-interval MS (5000)] [--gzip] [--rounds N (3)]
//                    [--outage-ms MS (20000)] [--outage-events N (50000)] [--outage-segment]
//                    [--profile (node --cpu-prof each SDK run into bench/profiles/)]
//                    [--node-flags="FLAGS" (Node/V8 flags for every SDK process of the run, e.g. --node-flags=--liftoff-only)]
//   Throughput also measures track() against its floor, the ceiling and the heap ceiling (bench/client.mjs `floor`) and ours with a
//   `spool` against ours without, in the same rounds.
//                    [--run-timeout S (180, per SDK run)]
//                    [--against DIR (throughput: compare with the batched-analytics built in DIR,
//                     another checkout, instead of Segment; a regression check, same machine, same run)]
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpus, totalmem } from 'node:os';
import { benchArgs, fail, integerFlag, nodeFlags } from './args.mjs';
import { builtFile } from './builds.mjs';
import { nextMessage } from './ipc.mjs';

const here = (path) => new URL(path, import.meta.url);
const args = benchArgs(import.meta.url, {
    scenario: { type: 'string', default: 'all' },
    events: { type: 'string', default: '100000' },
    'flush-at': { type: 'string', default: '20' },
    'flush-interval': { type: 'string', default: '5000' },
    gzip: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
    'outage-ms': { type: 'string', default: '20000' },
    'outage-events': { type: 'string', default: '50000' },
    'outage-segment': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'node-flags': { type: 'string', default: '' },
    'run-timeout': { type: 'string', default: '180' },
    against: { type: 'string' },
});

const positiveInteger = (name) => integerFlag(args, name, 1);
/** Given to every SDK process alike (ours, Segment's, the baseline), so that ratios stay fair. */
const NODE_FLAGS = nodeFlags(args);

const settings = {
  events: positiveInteger('events'),
  flushAt: positiveInteger('flush-at'),
  flushInterval: positiveInteger('flush-interval'),
  gzip: args.gzip,
  rounds: positiveInteger('rounds'),
  outageMs: positiveInteger('outage-ms'),
  outageEvents: positiveInteger('outage-events'),
  runTimeoutMs: positiveInteger('run-timeout') * 1000,
};
if (!['throughput', 'outage', 'all'].includes(args.scenario)) {
  fail(`Expected --scenario to be throughput, outage or all, got ${JSON.stringify(args.scenario)}`);
}

const versionOf = (path) => JSON.parse(readFileSync(here(path), 'utf8')).version;
const SDKS = {
  ours: { label: `batched-analytics ${versionOf('../packages/client/package.json')}` },
  segment: { label: `@segment/analytics-node ${versionOf('../node_modules/@segment/analytics-node/package.json')}` },
};
/** `--against DIR`: the other checkout's built client, run like ours, in place of Segment. */
let baselineDist;
if (args.against !== undefined) {
  baselineDist = pathToFileURL(builtFile(args.against, 'dist/index.js')).href;
  if (!existsSync(new URL(baselineDist))) fail(`Expected a built checkout in --against ${args.against}: run \`npm run build\` there`);
  SDKS.baseline = { label: `batched-analytics in ${args.against}` };
}
/** Who ours is measured against in the throughput scenario. */
const RIVAL = baselineDist === undefined ? 'segment' : 'baseline';

// ---------------------------------------------------------------- processes


async function startSink() {
  const child = fork(here('./sink.mjs'), [], { stdio: 'inherit' });
  const { port } = await nextMessage(child, 'listening');
  const ask = (command) => {
    const reply = nextMessage(child, command.type);
    child.send(command);
    return reply;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    expect: (count) => child.send({ type: 'expect', count }),
    setStatus: (status) => ask({ type: 'status', status }),
    stats: () => ask({ type: 'stats' }),
    ids: async () => (await ask({ type: 'ids' })).ids,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.disconnect();
      }),
  };
}

/** Runs bench/client.mjs once; `onMessage` sees its progress messages. Killed at the run timeout. */
function runClient(config, onMessage = () => {}) {
  // The heap ceiling measures what a queue holds on the heap between two full collections.
  const execArgv = config.heapCeiling ? [...NODE_FLAGS, '--expose-gc'] : [...NODE_FLAGS];
  if (args.profile) execArgv.push('--cpu-prof', `--cpu-prof-dir=${here('./profiles/').pathname}`, `--cpu-prof-name=${config.sdk}-${config.scenario}-${Date.now()}.cpuprofile`);
  const child = fork(here('./client.mjs'), [JSON.stringify(config)], { stdio: 'inherit', execArgv });
  child.on('message', onMessage);
  const timer = setTimeout(() => child.kill('SIGKILL'), settings.runTimeoutMs);
  return nextMessage(child, 'result').finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------- scenarios

/** Runs one throughput run; `spooled` is ours with a `spool` in a fresh temporary directory. */
async function throughputRun(sdk) {
  const sink = await startSink();
  const spool = sdk === 'spooled' ? mkdtempSync(join(tmpdir(), 'bench-spool-')) : undefined;
  try {
    sink.expect(settings.events);
    const config = {
      sdk: sdk === 'spooled' ? 'ours' : sdk,
      spool,
      dist: sdk === 'baseline' ? baselineDist : undefined,
      scenario: 'throughput',
      url: sink.url,
      events: settings.events,
      flushAt: settings.flushAt,
      flushInterval: settings.flushInterval,
      gzip: settings.gzip,
      closeTimeout: settings.runTimeoutMs,
    };
    const run = await runClient(config);
    const stats = await sink.stats();
    const events = settings.events;
    // End to end: from the first call until close() resolved AND the sink held every distinct id.
    const end = Math.max(run.closed, stats.doneAt ?? run.closed);
    return {
      enqueue: events / ((run.called - run.start) / 1000),
      endToEnd: stats.distinct / ((end - run.start) / 1000),
      cpu: (run.cpu.user + run.cpu.system) / events,
      rss: run.maxRss / 2 ** 20,
      requests: stats.requests,
      bytes: stats.bodyBytes / events,
      lost: events - stats.distinct,
      failed: run.outcome.failed,
      duplicates: stats.idsTotal - stats.distinct,
      connections: stats.peakConnections,
      cpuCalls: (run.cpuCalls.user + run.cpuCalls.system) / events,
      sampledRss: run.sampledRss / 2 ** 20,
      sinkCpu: (stats.cpu.user + stats.cpu.system) / 1000 / (end - run.start),
    };
  } finally {
    await sink.stop();
    if (spool !== undefined) rmSync(spool, { recursive: true, force: true });
  }
}

/**
 * track() against its floor in one process (see `floor` in bench/client.mjs): µs per call and the
 * median ratio of neighbouring blocks; `baseline` measures the `--against` build the same way.
 */
async function floorRun(sdk = 'ours') {
  const sink = await startSink();
  try {
    sink.expect(settings.events);
    const config = { sdk, dist: sdk === 'baseline' ? baselineDist : undefined, scenario: 'floor', url: sink.url, events: settings.events, flushAt: settings.flushAt, flushInterval: settings.flushInterval, gzip: settings.gzip, closeTimeout: settings.runTimeoutMs };
    const { trackUs, floorUs, ratio, ceilingUs, ceilingRatio, maxRss } = await runClient(config);
    // The heap ceiling in a process of its own (see bench/client.mjs), beside its own floor. Each
    // process ends holding as many messages: the client's queue in its store, or the heap's entries.
    const heap = await runClient({ ...config, heapCeiling: true });
    return {
      trackUs,
      floorUs,
      ratio,
      ceilingUs,
      ceilingRatio,
      rss: maxRss / 2 ** 20,
      heapUs: heap.heapUs,
      heapRatio: heap.heapRatio,
      heapBytes: heap.heapBytes,
      storeBytes: heap.storeBytes,
      heapRss: heap.maxRss / 2 ** 20,
    };
  } finally {
    await sink.stop();
  }
}

/** What the spool may cost, ours with it against ours without, in the same run. */
const SPOOL_TARGETS = { endToEnd: { goal: '≥ 0.9×', met: (r) => r >= 0.9 }, cpu: { goal: '≤ 1.2×', met: (r) => r <= 1.2 } };
/** track() may cost at most this many times its floor. */
const FLOOR_TARGET = 1.15;

/** Against another build of ours, a metric may be at most 5 % worse (`better`: which way is better). */
const REGRESSION = { enqueue: 'higher', endToEnd: 'higher', cpu: 'lower', rss: 'lower' };

const METRICS = [
  { key: 'enqueue', label: 'enqueue calls/s', short: 'enqueue/s', format: thousands, target: (r) => r >= 10, goal: '≥ 10×' },
  { key: 'endToEnd', label: 'end-to-end events/s', short: 'e2e/s', format: thousands, target: (r) => r >= 8, goal: '≥ 8×' },
  { key: 'cpu', label: 'CPU µs/event', short: 'cpu', format: (v) => v.toFixed(1), target: (r) => r <= 0.1, goal: '≤ 0.1×' },
  { key: 'rss', label: 'peak RSS MB', short: 'rss', format: (v) => v.toFixed(0), target: (r) => r <= 0.1, goal: '≤ 0.1×' },
  { key: 'requests', label: 'requests', short: 'requests', format: thousands },
  { key: 'bytes', label: 'bytes/event', short: 'bytes/event', format: (v) => v.toFixed(0) },
  { key: 'lost', label: 'lost', short: 'lost', format: thousands, zero: true },
  { key: 'duplicates', label: 'duplicates', short: 'dup', format: thousands, zero: true },
  { key: 'connections', label: 'peak connections', short: 'conns', format: thousands },
];

async function throughput() {
  const { events, flushAt, gzip, rounds } = settings;
  console.log(
    `\n## Throughput: ${thousands(events)} "Order Completed" track calls (~300 B of properties), flushAt ${flushAt}` +
      `${gzip ? ', gzip (ours only: Segment has no gzip option)' : ''}, ${rounds} interleaved rounds\n`,
  );
  console.log(`Ours runs with maxQueueSize = ${thousands(events)} (= the event count), so no call is dropped.\n`);
  const runs = { ours: [], [RIVAL]: [], spooled: [] };
  const floors = [];
  const baselineFloors = [];
  const showFloor = (round, who, floor) =>
    console.log(
      `round ${round} floor ${who.padEnd(8)} track=${floor.trackUs.toFixed(2)} µs floor=${floor.floorUs.toFixed(2)} µs ratio=${floor.ratio.toFixed(3)} ` +
        `ceiling=${floor.ceilingUs.toFixed(2)} µs (${floor.ceilingRatio.toFixed(3)}×) ` +
        `heap-ceiling=${floor.heapUs.toFixed(2)} µs (${floor.heapRatio.toFixed(3)}×, ${floor.heapBytes.toFixed(0)} B of heap a message against ${floor.storeBytes.toFixed(0)} off it; ` +
        `peak RSS ${floor.heapRss.toFixed(0)} MB against ${floor.rss.toFixed(0)})`,
    );
  for (let round = 1; round <= rounds; round++) {
    // Alternate who goes first, so drift (thermal, page cache) does not favour one SDK.
    const order = round % 2 === 1 ? ['ours', RIVAL, 'spooled'] : ['spooled', RIVAL, 'ours'];
    const floor = await floorRun();
    floors.push(floor);
    showFloor(round, 'ours', floor);
    if (RIVAL === 'baseline') {
      const baselineFloor = await floorRun('baseline');
      baselineFloors.push(baselineFloor);
      showFloor(round, 'baseline', baselineFloor);
    }
    for (const sdk of order) {
      const result = await throughputRun(sdk);
      runs[sdk].push(result);
      console.log(
        `round ${round} ${sdk.padEnd(8)} ` +
          METRICS.map((m) => `${m.short}=${m.format(result[m.key])}`).join(' ') +
          ` reported-failed=${result.failed} rss-sampled=${result.sampledRss.toFixed(0)}` +
          ` cpu-in-calls=${result.cpuCalls.toFixed(1)}` +
          ` sink-busy=${(result.sinkCpu * 100).toFixed(0)}%`,
      );
    }
  }
  const ours = medians(runs.ours);
  const theirs = medians(runs[RIVAL]);
  console.log(`\nMedians of ${rounds} runs:\n`);
  console.log(`| metric | ${SDKS.ours.label} | ${SDKS[RIVAL].label} | ours/theirs | target |`);
  console.log('|---|---:|---:|---:|---|');
  const misses = [];
  for (const m of METRICS) {
    const ratio = theirs[m.key] === 0 ? undefined : ours[m.key] / theirs[m.key];
    let target = '';
    if (RIVAL === 'baseline' && REGRESSION[m.key] && ratio !== undefined) {
      const met = REGRESSION[m.key] === 'higher' ? ratio >= 0.95 : ratio <= 1.05;
      target = `${REGRESSION[m.key] === 'higher' ? '≥ 0.95×' : '≤ 1.05×'} ${met ? 'met' : 'MISSED'}`;
      if (!met) misses.push(m.label);
    } else if (RIVAL === 'segment' && m.target && ratio !== undefined) {
      const met = m.target(ratio);
      target = `${m.goal} ${met ? 'met' : 'MISSED'}`;
      if (!met) misses.push(m.label);
    } else if (m.zero) {
      target = ours[m.key] === 0 ? '0: met' : '0: MISSED';
      if (ours[m.key] !== 0) misses.push(m.label);
    }
    const shown = ratio === undefined ? '—' : `${ratio >= 1 ? ratio.toFixed(1) : ratio.toFixed(3)}×`;
    console.log(`| ${m.label} | ${m.format(ours[m.key])} | ${m.format(theirs[m.key])} | ${shown} | ${target} |`);
  }
  const floor = medians(floors);
  const floorRatio = floor.ratio;
  const floorMet = floorRatio <= FLOOR_TARGET;
  if (!floorMet) misses.push('track() against its floor');
  console.log(
    `| track() µs/call : its floor (randomUUID + JSON.stringify of the complete message, same process, interleaved) | ${floor.trackUs.toFixed(2)} | floor ${floor.floorUs.toFixed(2)} | ${floorRatio.toFixed(3)}× | ≤ ${FLOOR_TARGET}× ${floorMet ? 'met' : 'MISSED'} |`,
  );
  if (RIVAL === 'baseline') {
    const before = medians(baselineFloors);
    console.log(
      `| track() µs/call : its floor, the \`--against\` build (same rounds) | ${before.trackUs.toFixed(2)} | floor ${before.floorUs.toFixed(2)} | ${before.ratio.toFixed(3)}× | |`,
    );
  }
  console.log(
    `| the ceiling µs/call : its floor (the floor plus the UTF-8 byte count, the copy into an off-heap slab and a queue entry; no validation) | ${floor.ceilingUs.toFixed(2)} | floor ${floor.floorUs.toFixed(2)} | ${floor.ceilingRatio.toFixed(3)}× | |`,
  );
  console.log(
    `| the heap ceiling µs/call : its floor (the floor plus a queue entry holding the JSON string on the V8 heap; no byte count, no copy, no validation; a process of its own) | ${floor.heapUs.toFixed(2)} | floor ${floor.floorUs.toFixed(2)} | ${floor.heapRatio.toFixed(3)}× | |`,
  );
  console.log(
    `| what the heap ceiling holds per queued message | ${floor.heapBytes.toFixed(0)} B of V8 heap | off the heap: ${floor.storeBytes.toFixed(0)} B | ${(floor.heapBytes / floor.storeBytes).toFixed(2)}× | |`,
  );
  console.log(
    `| peak RSS MB of a process holding ${thousands(settings.events)} queued messages: on the heap (the heap ceiling's) against off it (track()'s, in its store) | ${floor.heapRss.toFixed(0)} | ${floor.rss.toFixed(0)} | ${(floor.heapRss / floor.rss).toFixed(2)}× | |`,
  );
  const spooled = medians(runs.spooled);
  console.log(`\nThe spool: ours with \`spool\` (a fresh temporary directory) against ours without, same rounds:\n`);
  console.log('| metric | with spool | without | with/without | target |');
  console.log('|---|---:|---:|---:|---|');
  for (const m of METRICS.filter((metric) => ['enqueue', 'endToEnd', 'cpu', 'rss', 'lost', 'duplicates'].includes(metric.key))) {
    const ratio = ours[m.key] === 0 ? undefined : spooled[m.key] / ours[m.key];
    const goal = SPOOL_TARGETS[m.key];
    let target = '';
    if (goal && ratio !== undefined) {
      target = `${goal.goal} ${goal.met(ratio) ? 'met' : 'MISSED'}`;
      if (!goal.met(ratio)) misses.push(`spool ${m.label}`);
    } else if (m.zero) {
      target = spooled[m.key] === 0 ? '0: met' : '0: MISSED';
      if (spooled[m.key] !== 0) misses.push(`spool ${m.label}`);
    }
    const shown = ratio === undefined ? '—' : `${ratio.toFixed(3)}×`;
    console.log(`| ${m.label} | ${m.format(spooled[m.key])} | ${m.format(ours[m.key])} | ${shown} | ${target} |`);
  }
  // The targets are stated in docs/performance.md ("What the benchmarks hold the code to").
  console.log(misses.length === 0 ? '\nEvery target met (docs/performance.md states them).' : `\nTargets missed (docs/performance.md states them): ${misses.join(', ')}.`);
}

async function outageRun(sdk) {
  const sink = await startSink();
  try {
    await sink.setStatus(503);
    let recoveredAt;
    let recovery;
    const config = {
      sdk,
      scenario: 'outage',
      url: sink.url,
      events: settings.outageEvents,
      outageMs: settings.outageMs,
      flushAt: settings.flushAt,
      flushInterval: settings.flushInterval,
      gzip: settings.gzip,
      closeTimeout: settings.runTimeoutMs,
    };
    const run = await runClient(config, (message) => {
      if (message.type !== 'started') return;
      recovery = new Promise((resolve) => {
        setTimeout(async () => {
          recoveredAt = (await sink.setStatus(200)).at;
          resolve();
        }, settings.outageMs - (performance.timeOrigin + performance.now() - message.at));
      });
    });
    await recovery;
    const stats = await sink.stats();
    const received = new Set(await sink.ids());
    const dropped = new Set(run.dropped);
    let accepted = 0;
    let missing = 0;
    let unexpected = 0;
    for (let i = 0; i < settings.outageEvents; i++) {
      const id = `outage-${i}`;
      if (dropped.has(id)) {
        if (received.has(id)) unexpected += 1;
        continue;
      }
      accepted += 1;
      if (!received.has(id)) missing += 1;
    }
    const outageSeconds = stats.perSecond.filter((b) => b.second * 1000 < recoveredAt && (b.second + 1) * 1000 > run.start);
    const outageRequests = outageSeconds.reduce((sum, b) => sum + (b[503] ?? 0), 0);
    return {
      run,
      stats,
      accepted,
      missing,
      unexpected,
      outageRequests,
      outageRate: outageRequests / ((recoveredAt - run.start) / 1000),
      peakPerSecond: Math.max(0, ...outageSeconds.map((b) => b[503] ?? 0)),
      recoveryMs: (stats.doneAt ?? run.closed) - recoveredAt,
      recoveredAt,
    };
  } finally {
    await sink.stop();
  }
}

async function outage() {
  const { outageMs, outageEvents } = settings;
  const sdks = args['outage-segment'] ? ['ours', 'segment'] : ['ours'];
  console.log(
    `\n## Outage: the endpoint answers 503 for ${outageMs / 1000} s while ${thousands(outageEvents)} calls arrive ` +
      `(${thousands(outageEvents / (outageMs / 1000))}/s), then 200\n`,
  );
  console.log('Ours runs with its default maxQueueSize (10,000): calls beyond it are dropped and reported.\n');
  const results = {};
  for (const sdk of sdks) results[sdk] = await outageRun(sdk);
  const row = (label, cell) => console.log(`| ${label} | ${sdks.map((sdk) => cell(results[sdk])).join(' | ')} |`);
  console.log(`| | ${sdks.map((sdk) => SDKS[sdk].label).join(' | ')} |`);
  console.log(`|---|${sdks.map(() => '---:').join('|')}|`);
  const step = Math.ceil(outageEvents / 10);
  row(`RSS MB after ${thousands(step)}, ${thousands(step * 2)}, … ${thousands(outageEvents)} calls`, (r) =>
    r.run.rssAt.map((s) => (s.rss / 2 ** 20).toFixed(0)).join(' '),
  );
  row('peak RSS MB', (r) => (r.run.maxRss / 2 ** 20).toFixed(0));
  row('calls accepted / dropped', (r) => `${thousands(r.accepted)} / ${thousands(r.run.dropped.length)}`);
  row('requests during the outage', (r) => thousands(r.outageRequests));
  row('requests/s during the outage (mean, peak second)', (r) => `${r.outageRate.toFixed(1)}, ${r.peakPerSecond}`);
  row('accepted events delivered after recovery', (r) => `${thousands(r.accepted - r.missing)} of ${thousands(r.accepted)}`);
  row('duplicates', (r) => thousands(r.stats.idsTotal - r.stats.distinct));
  row('dropped events delivered anyway', (r) => thousands(r.unexpected));
  row("the client's own account (delivered / failed / dropped)", ({ run: { outcome } }) =>
    [outcome.delivered, outcome.failed, outcome.dropped].map((n) => (n === undefined ? '—' : thousands(n))).join(' / '),
  );
  row('recovery to last delivery (s)', (r) => (r.recoveryMs / 1000).toFixed(1));
  row('CPU ms over the run', (r) => ((r.run.cpu.user + r.run.cpu.system) / 1000).toFixed(0));
}

// ---------------------------------------------------------------- helpers

function medians(results) {
  const out = {};
  for (const key of Object.keys(results[0])) {
    const sorted = results.map((r) => r[key]).sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    out[key] = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
  return out;
}

function thousands(value) {
  return Math.round(value).toLocaleString('en-US');
}

// ---------------------------------------------------------------- main

console.log(
  `# npm run bench\n\nNode ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ` +
    `${(totalmem() / 2 ** 30).toFixed(0)} GB; sink and each SDK run in separate processes on 127.0.0.1` +
    `${NODE_FLAGS.length === 0 ? '' : `, every SDK process run with \`${NODE_FLAGS.join(' ')}\``}.`,
);
if (args.scenario !== 'outage') await throughput();
if (args.scenario !== 'throughput') await outage();
