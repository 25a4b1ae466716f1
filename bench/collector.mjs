// `npm run bench:collector`: the local collector end to end. The client (this process, the built
// dist/) sends N track calls to a real `batched-analytics serve` child process, which journals
// them and forwards each to a loopback receiver in a third process (bench/receiver.mjs). Two
// scenarios: the source has one healthy webhook URL; or a stalled URL (never answers) and the
// healthy one. With --baseline DIR, the same runs use DIR/dist/cli.js as the collector too (e.g. a
// worktree of an older commit, built), interleaved with ours, and the table shows ratios. With
// --ceiling, bench/bare-forwarder.mjs runs as three more collectors: what one HTTP request per message
// allows on this machine, the same with the least a durable collector must add (each batch
// appended and fsynced before its 200, each delivery appended), and the lean collector: the
// collector's contract per message done plainly (validation, enrichment, de-duplication, the
// webhook body, the delivery and its record journaled), without the page, claims or retries. With --store, each build also runs with its queue in PostgreSQL, in a
// fresh database per run (bench/postgres.mjs): one `serve` process, and three on one database with
// the messages sent round-robin to them (one client each); the table adds the SQL statements per
// delivered message (pg_stat_statements; "n/a" with the reason when the server does not have it)
// and the targets the PostgreSQL store is held to. Every scenario runs on every store: a stalled URL
// costs the database its retries. The outage scenario (journal only, from a cold start) keeps the
// receiver down (503) while the N messages arrive, then brings it up: it prints the collector's
// peak RSS, the journal's size before and after, the times to the first delivery and to the full
// drain once the receiver is back, messages lost and duplicated (by the receiver's count), and
// the healthy scenario's time for the same count (run beside it). The ingest scenario (journal,
// this build only) measures ingestion alone: a source with no webhooks, --ingest-messages distinct
// messageIds sent as batches of --flush-at over 8 connections, once with de-duplication on (the
// default window) and once off (window 0), in the same round; it prints accepted msgs/s and the
// collector's RSS, and the costs of de-duplication against their targets. Loopback only; every run is bounded by --run-timeout, and its
// processes, database and temp dir are removed after, failed or not. A benchmark, not a test.
//
//   npm run bench:collector -- [--messages N (10000)] [--timeout MS (1000, the webhooks' timeout)]
//                              [--flush-at N (100)] [--rounds N (1)] [--baseline DIR]
//                              [--warmup N (5000) messages forwarded by each collector process before the measured
//                              run, which then measures processes as they run for days; 0: from a cold start]
//                              [--run-timeout S (30)] [--scenarios healthy,stalled (and/or remote: one URL answering
//                              after --remote-delay MS (20), as across a network, where a collector's 64 requests per
//                              URL bound what it forwards; and/or silenced: a URL that answered all through the warm-up
//                              stops answering as the measured run starts, beside the healthy one; and/or outage; and/or ingest)]
//                              [--ingest-messages N (1000000) distinct messageIds the ingest scenario sends] [--ceiling] [--profile (node --cpu-prof the collector
//                              into bench/profiles/ and print its top functions, and each collector's main-thread time per
//                              message by part of the code: a package's src/ directory, through the built files' source
//                              maps, or a dependency; with --ceiling the bare forwarders' beside it)]
//                              [--allocations (sample what each collector allocates, collected or not, into bench/profiles/,
//                              and print the bytes allocated per message by part of the code, as --profile does for time;
//                              the sampling slows the collectors, so take rates and CPU from a run without it)]
//                              [--store local | --store postgres://USER[:PASSWORD]@HOST:PORT/DB (local: a throwaway
//                              cluster from the server binaries the tests use, e.g. Debian's /usr/lib/postgresql/15/bin;
//                              a URL: a server whose user may create databases, and, for the statement count,
//                              the pg_stat_statements extension and reset its counts)]
//                              [--log-format json (this build's serve logs as JSON; the baseline keeps its default)]
//                              [--scrape MS (GET this build's /metrics every MS while it runs, as Prometheus would; 0: never)]
//                              [--node-flags="FLAGS" (Node/V8 flags for this build's collector processes only, e.g.
//                              --node-flags="--trace-opt --trace-deopt"; to measure a flag, give this checkout as --baseline too.
//                              What they print on stdout besides their URL goes to bench/profiles/, with the measured
//                              run marked in it)]
import { fork, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { SourceMap } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Analytics } from '../packages/client/dist/index.js';
import { benchArgs, fail, integerFlag, nodeFlags } from './args.mjs';
import { builtCli } from './builds.mjs';
import { nextMessage } from './ipc.mjs';
import { freshDatabase, openServer } from './postgres.mjs';

const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const args = benchArgs(import.meta.url, {
    messages: { type: 'string', default: '10000' },
    timeout: { type: 'string', default: '1000' },
    'flush-at': { type: 'string', default: '100' },
    rounds: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '5000' },
    baseline: { type: 'string' },
    'run-timeout': { type: 'string', default: '30' },
    profile: { type: 'boolean', default: false },
    allocations: { type: 'boolean', default: false },
    ceiling: { type: 'boolean', default: false },
    scenarios: { type: 'string', default: 'healthy,stalled' },
    'remote-delay': { type: 'string', default: '20' },
    store: { type: 'string' },
    'log-format': { type: 'string' },
    scrape: { type: 'string', default: '0' },
    'ingest-messages': { type: 'string', default: '1000000' },
    'node-flags': { type: 'string', default: '' },
});

const positiveInteger = (name) => integerFlag(args, name, 1);
const nonNegativeInteger = (name) => integerFlag(args, name, 0);

const settings = {
  messages: positiveInteger('messages'),
  timeout: positiveInteger('timeout'),
  flushAt: positiveInteger('flush-at'),
  rounds: positiveInteger('rounds'),
  warmup: nonNegativeInteger('warmup'),
  runTimeoutMs: positiveInteger('run-timeout') * 1000,
  remoteDelay: positiveInteger('remote-delay'),
  scrape: nonNegativeInteger('scrape'),
  ingestMessages: positiveInteger('ingest-messages'),
};
if (args.store !== undefined && args.store !== 'local' && !/^postgres(ql)?:\/\//.test(args.store)) {
  fail(`Expected --store to be local or a postgres:// URL, got ${JSON.stringify(args.store)}`);
}
/** The collectors compared: this build first, the one the ratios divide by second. */
// Only this build has the observability flags: --log-format, and /metrics to scrape.
const builds = [
  {
    name: 'this build',
    label: 'ours',
    script: here('../packages/client/dist/cli.js'),
    flags: args['log-format'] === undefined ? [] : ['--log-format', args['log-format']],
    scrape: settings.scrape,
    nodeFlags: nodeFlags(args),
  },
];
if (args.baseline !== undefined) {
  const root = path.resolve(args.baseline);
  builds.push({ name: `baseline (${path.basename(root)})`, label: 'baseline', script: builtCli(root) });
}
// It keeps no queue: it runs on the journal's column only.
if (args.ceiling) {
  builds.push(
    { name: 'bare forwarder', label: 'ceiling', script: here('./bare-forwarder.mjs'), queueless: true },
    { name: 'durable bare forwarder', label: 'durable-ceiling', script: here('./bare-forwarder.mjs'), flags: ['--durable'], queueless: true },
    { name: 'lean collector', label: 'lean-ceiling', script: here('./bare-forwarder.mjs'), flags: ['--lean'], queueless: true },
  );
}
/** Where a build's collectors keep their queue, and how many `serve` processes share it. */
const stores = [{ name: 'journal', label: 'journal', processes: 1, postgres: false }];
if (args.store !== undefined) {
  stores.push({ name: 'PostgreSQL, 1 process', label: 'pg1', processes: 1, postgres: true }, { name: 'PostgreSQL, 3 processes', label: 'pg3', processes: 3, postgres: true });
}
/** The table's columns: every build on every store it has. */
const columns = builds.flatMap((build) =>
  stores
    .filter((store) => !(build.queueless && store.postgres))
    .map((store) => ({
      build,
      store,
      label: `${build.label}-${store.label}`,
      name: stores.length === 1 || build.queueless ? build.name : builds.length === 1 ? store.name : `${build.name}, ${store.name}`,
    })),
);
const PROFILES = here('./profiles');
const clock = () => performance.timeOrigin + performance.now();
const sum = (values) => values.reduce((a, b) => a + b, 0);

// ---------------------------------------------------------------- cleanup

/** What to undo, newest last: the server's stop, then the current run's processes, database and temp dir. */
const undo = [];
/** The unwinding under way: a run's and Ctrl-C's take turns, so that neither returns before the other is done. */
let unwinding = Promise.resolve();
let interrupted = false;

/** Undoes all that was pushed since `undo` was `depth` long, newest first, each step whatever the others did. */
function unwind(depth) {
  unwinding = unwinding.then(async () => {
    while (undo.length > depth) {
      await undo
        .pop()()
        .catch((error) => console.error(`bench:collector: cleanup failed: ${error.message}`));
    }
  });
  return unwinding;
}

// A cluster started by pg_ctl is in a session of its own, and a signal sent to this process alone
// reaches none of its children: they are stopped here.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupted = true;
    unwind(0).finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- processes

async function startReceiver() {
  const child = fork(here('./receiver.mjs'), [], { stdio: 'inherit', env: { ...process.env, REMOTE_DELAY: String(settings.remoteDelay) } });
  const { healthy, stalled, remote, outage, silencing } = await nextMessage(child, 'listening');
  const { pid } = child;
  const ask = (type) => {
    const reply = nextMessage(child, type);
    return new Promise((resolve, reject) => {
      reply.then(resolve, reject);
      // Once the receiver is stopped (Ctrl-C), a failure rather than an unheard 'error' event.
      child.send({ type }, (error) => error && reject(error));
    });
  };
  return {
    healthy,
    stalled,
    remote,
    outage,
    silencing,
    /** Brings the outage URL up; resolves with when. */
    up: async () => (await ask('up')).at,
    /** Makes the silencing URL stop answering. */
    silence: () => ask('silence'),
    cpuMs: () => cpuMsOf(pid),
    count: async () => (await ask('count')).count,
    report: () => ask('report'),
    stop: () => new Promise((resolve) => child.once('exit', resolve).disconnect()),
  };
}

/**
 * A `serve` child process of one build, with its URL once it printed it; `where` is its
 * `--data-dir DIR` or `--store URL`. Stopped (SIGTERM, then SIGKILL 10 s later) if it does not
 * print its URL within --run-timeout.
 */
async function startCollector(build, config, where, label) {
  const execArgv = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES}`, `--cpu-prof-name=collector-${label}-${Date.now()}.cpuprofile`] : [];
  execArgv.push(...(build.nodeFlags ?? []));
  // What the flags make it print (V8's traces go to stdout) is kept apart from its URL.
  const printed = build.nodeFlags?.length > 0 ? path.join(PROFILES, `collector-${label}-${Date.now()}.stdout`) : undefined;
  if (printed !== undefined) mkdirSync(PROFILES, { recursive: true });
  const env = { ...process.env };
  if (args.allocations) {
    execArgv.push('--require', here('./heap-sampler.cjs'));
    env.BENCH_HEAP_PROFILE = path.join(PROFILES, `collector-${label}-${Date.now()}.heapprofile`);
  }
  const child = spawn(process.execPath, [...execArgv, build.script, 'serve', '--config', config, '--port', '0', ...where, ...(build.flags ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr = (stderr + chunk).slice(-2000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let stopping;
  let scraper;
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(scraper);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    })());
  let timer;
  try {
    const url = await new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`serve printed no URL within ${settings.runTimeoutMs} ms`)), settings.runTimeoutMs);
      child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr.trim()}`)));
      // Its URL is the first line that is one: flags may make it print other lines first.
      let found = false;
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (!found && /^https?:\/\//.test(line)) {
          found = true;
          resolve(line);
        } else if (printed !== undefined) appendFileSync(printed, `${line}\n`);
      });
    });
    if (build.scrape > 0) {
      scraper = setInterval(() => void fetch(`${url}/metrics`).then((res) => res.text(), () => undefined), build.scrape);
      scraper.unref();
    }
    return {
      url,
      /** The process's peak resident set, from Linux's /proc; undefined elsewhere. */
      peakRss: () => {
        const kb = /VmHWM:\s+(\d+) kB/.exec(procFile(child.pid, 'status'))?.[1];
        return kb === undefined ? undefined : Number(kb) * 1024;
      },
      /** CPU time the process used so far (user + system), in ms, from Linux's /proc; undefined elsewhere. */
      cpuMs: () => cpuMsOf(child.pid),
      /** Writes a line among what the process printed, when that is kept (`--node-flags`): where a phase of the run begins or ends. */
      mark: (text) => {
        if (printed !== undefined) appendFileSync(printed, `-- ${text} (${new Date().toISOString()})\n`);
      },
      /** The same for its main thread alone (the event loop's: its thread id is the process's). */
      mainThreadCpuMs: () => cpuMsOf(child.pid, `task/${child.pid}/stat`),
      pid: child.pid,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

function procFile(pid, name) {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return '';
  }
}

/**
 * utime + stime (fields 14 and 15 of /proc/PID/stat, after the command in parentheses), at 100
 * ticks/s; of one thread with `file` `task/TID/stat`.
 */
function cpuMsOf(pid, file = 'stat') {
  const fields = procFile(pid, file).split(') ')[1]?.split(' ');
  return fields === undefined ? undefined : (Number(fields[11]) + Number(fields[12])) * 10;
}

// ---------------------------------------------------------------- one run

/**
 * What a run needs besides its collectors, each undone by `unwind`: a temp dir, a receiver, and
 * a config file whose one source sends to the webhooks `webhooksOf` picks from the receiver's URLs.
 */
async function prepare(webhooksOf) {
  const temp = mkdtempSync(path.join(tmpdir(), 'bench-collector-'));
  undo.push(async () => rmSync(temp, { recursive: true, force: true }));
  const receiver = await startReceiver();
  undo.push(receiver.stop);
  const config = path.join(temp, 'collector.json');
  const sources = [{ name: 'bench', writeKey: 'wk_bench', destinations: { Webhooks: { webhooks: webhooksOf(receiver) } } }];
  writeFileSync(config, JSON.stringify({ sources, delivery: { timeout: settings.timeout } }));
  return { temp, receiver, config };
}

/** One run of `build`'s collectors on `store` (PostgreSQL ones on `server`), in `scenario`. */
async function run(build, store, scenario, server) {
  const depth = undo.length;
  try {
    const { temp, receiver, config } = await prepare(
      (urls) =>
        ({
          healthy: [{ url: urls.healthy }],
          stalled: [{ url: urls.stalled }, { url: urls.healthy }],
          silenced: [{ url: urls.silencing }, { url: urls.healthy }],
          remote: [{ url: urls.remote }],
        })[scenario],
    );
    let database;
    if (store.postgres) {
      database = await freshDatabase(server.url);
      undo.push(database.drop);
    }
    const where = database === undefined ? ['--data-dir', path.join(temp, 'data')] : ['--store', database.url];
    const collectors = [];
    for (let index = 0; index < store.processes; index++) {
      const collector = await startCollector(build, config, where, `${build.label}-${store.label}-${scenario}-${index}`);
      undo.push(collector.stop);
      collectors.push(collector);
    }
    const track = (client, seq, callback) =>
      client.track({ userId: `user-${seq % 100}`, event: 'Order Completed', properties: { seq, total: 30, currency: 'EUR', sku: 'sku-1234' } }, callback);
    const sendAll = (count, first, callback) => {
      const clients = collectors.map(({ url }) => new Analytics('wk_bench', { endpoint: url, flushAt: settings.flushAt, maxQueueSize: count }));
      for (let seq = first; seq < first + count; seq++) track(clients[seq % clients.length], seq, (error) => callback(seq, error));
      return clients;
    };
    const waitForArrivals = async (count, deadline) => {
      let arrived = 0;
      while ((arrived = await receiver.count()) < count && clock() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      return arrived;
    };
    // Each process first forwards --warmup messages of its own (numbered after the measured ones),
    // so that the run measures collectors as they run for days: compiled, their heaps grown; then
    // the webhook timeout passes, for the stalled URL's requests to end.
    const warmup = settings.warmup * collectors.length;
    if (warmup > 0) {
      const clients = sendAll(warmup, settings.messages, () => undefined);
      await Promise.all(clients.map((client) => client.close({ timeout: settings.runTimeoutMs })));
      // A build that cannot forward its warm-up gets no figures, and the others still run.
      if ((await waitForArrivals(warmup, clock() + settings.runTimeoutMs)) < warmup) return failedRun(`the warm-up was not forwarded within ${settings.runTimeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, settings.timeout));
    }
    await database?.countFromNow();
    // Their start and warm-up are not work per message.
    const cpuAtStart = {
      collector: sum(collectors.map((collector) => collector.cpuMs())),
      mainThread: sum(collectors.map((collector) => collector.mainThreadCpuMs())),
      receiver: receiver.cpuMs(),
    };

    const acceptedAt = new Array(settings.messages);
    // A URL that answered all through the warm-up goes silent as the measured messages come: its
    // breaker closed, its first `timeout` of requests that never end is in the measured run.
    if (scenario === 'silenced') await receiver.silence();
    for (const collector of collectors) collector.mark('the measured run starts');
    const started = clock();
    const deadline = started + settings.runTimeoutMs;
    const clients = sendAll(settings.messages, 0, (seq, error) => {
      if (error === undefined) acceptedAt[seq] = clock();
    });
    const summaries = await Promise.all(clients.map((client) => client.close({ timeout: Math.max(0, Math.round(deadline - clock())) })));
    const accepted = sum(summaries.map((summary) => summary.delivered));
    const acceptedEnd = clock();
    const forwarded = (await waitForArrivals(warmup + accepted, deadline)) - warmup;
    const forwardedEnd = clock();
    for (const collector of collectors) collector.mark('the measured run ends: every message arrived');
    const peakRss = Math.max(...collectors.map((collector) => collector.peakRss()));
    const cpu = {
      collector: sum(collectors.map((collector) => collector.cpuMs())) - cpuAtStart.collector,
      mainThread: sum(collectors.map((collector) => collector.mainThreadCpuMs())) - cpuAtStart.mainThread,
      receiver: receiver.cpuMs() - cpuAtStart.receiver,
    };
    const report = await receiver.report();
    // Stopped first, so that the settlements they still held are written and counted.
    await Promise.all(collectors.map((collector) => collector.stop()));
    const statements = await database?.statements();
    const latencies = report.arrivals.filter(([seq]) => acceptedAt[seq] !== undefined).map(([seq, at]) => at - acceptedAt[seq]).sort((a, b) => a - b);
    return {
      accepted,
      forwarded,
      acceptedPerSecond: accepted / ((acceptedEnd - started) / 1000),
      forwardedPerSecond: forwarded / ((forwardedEnd - started) / 1000),
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      peakRss,
      collectorCpuPerMessage: (cpu.collector * 1000) / settings.messages,
      mainThreadCpuPerMessage: (cpu.mainThread * 1000) / settings.messages,
      mainThreadBusy: cpu.mainThread / ((forwardedEnd - started) * collectors.length),
      receiverCpuPerMessage: (cpu.receiver * 1000) / settings.messages,
      statementsPerMessage: statements?.count === undefined ? Number.NaN : statements.count / forwarded,
      statementsUnavailable: statements?.unavailable,
      stalledRequests: report.stalledRequests,
      silencedRequests: report.silencedRequests,
      complete: forwarded === settings.messages,
    };
  } finally {
    await unwind(depth);
  }
}

/** A run that could not be measured: no figures, and why. */
function failedRun(failure) {
  const none = Number.NaN;
  return {
    accepted: 0,
    forwarded: 0,
    acceptedPerSecond: none,
    forwardedPerSecond: none,
    p50: none,
    p99: none,
    peakRss: none,
    collectorCpuPerMessage: none,
    mainThreadCpuPerMessage: none,
    mainThreadBusy: none,
    receiverCpuPerMessage: none,
    statementsPerMessage: none,
    stalledRequests: 0,
    silencedRequests: 0,
    complete: false,
    failure,
  };
}

/** The bytes of the journal's files in a data dir (the segments, or a version-1 journal). */
function journalBytes(dir) {
  try {
    return sum(readdirSync(dir).filter((name) => name.startsWith('journal')).map((name) => statSync(path.join(dir, name)).size));
  } catch {
    return Number.NaN;
  }
}

const JOURNAL_AFTER_TARGET = 10 * 1024 * 1024;
/** How long after the drain the journal may take to give its space back. */
const RECLAIM_WAIT = 5_000;

/** The outage scenario on `build`'s collector: the receiver down while all messages arrive, then up. */
async function outage(build) {
  const depth = undo.length;
  try {
    const { temp, receiver, config } = await prepare((urls) => [{ url: urls.outage }]);
    const data = path.join(temp, 'data');
    const collector = await startCollector(build, config, ['--data-dir', data], `${build.label}-journal-outage`);
    undo.push(collector.stop);
    const started = clock();
    const client = new Analytics('wk_bench', { endpoint: collector.url, flushAt: settings.flushAt, maxQueueSize: settings.messages });
    for (let seq = 0; seq < settings.messages; seq++) {
      client.track({ userId: `user-${seq % 100}`, event: 'Order Completed', properties: { seq, total: 30, currency: 'EUR', sku: 'sku-1234' } });
    }
    const { delivered: accepted } = await client.close({ timeout: settings.runTimeoutMs });
    const journalBefore = journalBytes(data);
    const upAt = await receiver.up();
    const deadline = clock() + settings.runTimeoutMs;
    let forwarded = 0;
    while ((forwarded = await receiver.count()) < accepted && clock() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const drainedAt = clock();
    let journalAfter = journalBytes(data);
    while (journalAfter >= JOURNAL_AFTER_TARGET && clock() < drainedAt + RECLAIM_WAIT) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      journalAfter = journalBytes(data);
    }
    const peakRss = collector.peakRss();
    const report = await receiver.report();
    await collector.stop();
    const firstAt = report.arrivals.reduce((first, [, at]) => Math.min(first, at), Number.POSITIVE_INFINITY);
    return {
      accepted,
      acceptSeconds: (upAt - started) / 1000,
      forwarded,
      lost: accepted - report.arrivals.length,
      duplicates: report.duplicates,
      peakRss,
      journalBefore,
      journalAfter,
      firstSeconds: (firstAt - upAt) / 1000,
      drainSeconds: (drainedAt - upAt) / 1000,
      complete: forwarded >= accepted,
    };
  } finally {
    await unwind(depth);
  }
}

/** Connections the ingest scenario sends over at once. */
const INGEST_CONNECTIONS = 8;
/** Messages each ingest run sends first, unmeasured: the collector compiled and its heap grown. */
const INGEST_WARMUP = 20_000;
/** What de-duplication may cost the ingest scenario: a share of accepted msgs/s, and RSS. */
const DEDUPE_TARGETS = { throughputShare: 0.1, rssBytes: 64 * 1024 * 1024 };

/**
 * The ingest scenario on this build's collector, de-duplication `on` or off: a source with no
 * webhooks, `count` messages with distinct messageIds, POSTed as /v1/batch bodies of --flush-at
 * messages over INGEST_CONNECTIONS connections (no client library: its own cost would hide the
 * collector's).
 */
async function ingestOnly(build, on) {
  const depth = undo.length;
  try {
    const temp = mkdtempSync(path.join(tmpdir(), 'bench-collector-'));
    undo.push(async () => rmSync(temp, { recursive: true, force: true }));
    const config = path.join(temp, 'collector.json');
    writeFileSync(config, JSON.stringify({ sources: [{ name: 'bench', writeKey: 'wk_bench' }], dedupe: on ? {} : { window: 0 } }));
    const collector = await startCollector(build, config, ['--data-dir', path.join(temp, 'data')], `${build.label}-journal-ingest-${on ? 'on' : 'off'}`);
    undo.push(collector.stop);
    const authorization = `Basic ${Buffer.from('wk_bench:').toString('base64')}`;
    const timestamp = new Date().toISOString();
    const body = (prefix, first, count) => {
      const messages = [];
      for (let seq = first; seq < first + count; seq++) {
        messages.push(`{"type":"track","userId":"user-${seq % 100}","event":"Order Completed","messageId":"${prefix}-${seq}","timestamp":"${timestamp}","properties":{"seq":${seq},"total":30,"currency":"EUR","sku":"sku-1234"}}`);
      }
      return `{"batch":[${messages.join(',')}]}`;
    };
    const sendAll = async (prefix, total, deadline) => {
      let next = 0;
      let accepted = 0;
      const connection = async () => {
        while (next < total && clock() < deadline) {
          const first = next;
          const count = Math.min(settings.flushAt, total - first);
          next += count;
          const res = await fetch(`${collector.url}/v1/batch`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: body(prefix, first, count) });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`the collector answered ${res.status} to a batch`);
          accepted += count;
        }
      };
      await Promise.all(Array.from({ length: INGEST_CONNECTIONS }, connection));
      return accepted;
    };
    // A million messages take far longer than one forwarding run: its own bound, from the count.
    const bound = Math.max(settings.runTimeoutMs, settings.ingestMessages / 2);
    await sendAll('warm', INGEST_WARMUP, clock() + bound);
    const started = clock();
    const accepted = await sendAll('m', settings.ingestMessages, started + bound);
    const seconds = (clock() - started) / 1000;
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(procFile(collector.pid, 'status'))?.[1] ?? Number.NaN) * 1024;
    return { accepted, acceptedPerSecond: accepted / seconds, rss, peakRss: collector.peakRss(), complete: accepted === settings.ingestMessages };
  } finally {
    await unwind(depth);
  }
}

function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function median(values) {
  const sorted = values.filter((v) => v !== undefined && !Number.isNaN(v)).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)];
}

// ---------------------------------------------------------------- profile

/** The newest profile of `label` (a CPU profile, or with `.heapprofile` an allocation one), parsed; undefined when there is none. */
function newestProfile(label, extension = '.cpuprofile') {
  const file = readdirSync(PROFILES)
    .filter((name) => name.startsWith(`collector-${label}-`) && name.endsWith(extension))
    .sort()
    .at(-1);
  return file === undefined ? undefined : JSON.parse(readFileSync(path.join(PROFILES, file), 'utf8'));
}

/** The functions with the most self time in the newest profile of `label`. */
function topFunctions(label, count = 12) {
  const profile = newestProfile(label);
  if (profile === undefined) return [];
  const self = new Map();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const deltas = profile.timeDeltas;
  profile.samples.forEach((id, index) => {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const key = `${functionName || '(anonymous)'} ${url ? `${path.basename(url)}:${lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + (deltas[index] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return [...self].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, micros]) => `${((100 * micros) / total).toFixed(1).padStart(5)} %  ${name}`);
}

/** Each built file's source map, read once; null when it has none. */
const sourceMaps = new Map();
/** Each call frame's part of the code, found once. */
const partOfFrame = new Map();

/**
 * Which part of the code a call frame runs: a directory of a package's `src/` (through the built
 * file's source map: `collector delivery/journal`, `client webhooks`), a dependency (`undici`), the
 * bench's own script, or undefined for Node's own code and V8's entries.
 */
function partOf({ url, lineNumber, columnNumber }) {
  const key = `${url}:${lineNumber}:${columnNumber}`;
  if (partOfFrame.has(key)) return partOfFrame.get(key);
  let part;
  // CommonJS modules (undici) are named by their path in allocation profiles, by URL elsewhere.
  const file = url.startsWith('file://') ? fileURLToPath(url) : path.isAbsolute(url) ? url : undefined;
  if (file !== undefined) {
    const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];
    if (dependency !== undefined) part = dependency;
    else if (file.includes(`${path.sep}bench${path.sep}`)) part = `bench ${path.basename(file)}`;
    else {
      if (!sourceMaps.has(file)) {
        let map = null;
        try {
          map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
        } catch {
          // Built without a source map: the file's name is all there is to go by.
        }
        sourceMaps.set(file, map);
      }
      const original = sourceMaps.get(file)?.findEntry(lineNumber, columnNumber)?.originalSource;
      // Relative to the built file (`../src/delivery/journal/store.ts`).
      const source = original === undefined ? '' : path.resolve(path.dirname(file), original).split(path.sep).join('/');
      const where = /packages\/(client|collector)\/src\/(?:(.*)\/)?[^/]+$/.exec(source);
      part = where === null ? path.basename(file) : `${where[1]} ${where[2] ?? '(top)'}`;
    }
  }
  partOfFrame.set(key, part);
  return part;
}

/**
 * The busy time of the newest profile of `label` by part of the code, in µs per message handled
 * (`messages`): each sample goes to the innermost frame of its stack that is ours or a
 * dependency's (Node's own code goes to whoever called it), else to the garbage collector or
 * Node itself. A map of part to µs.
 */
function busyByPart(label, messages) {
  const profile = newestProfile(label);
  if (profile === undefined) return undefined;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const partOfNode = new Map();
  const nodePart = (id) => {
    if (partOfNode.has(id)) return partOfNode.get(id);
    const { callFrame } = byId.get(id);
    const up = parent.get(id);
    const part = partOf(callFrame) ?? (up === undefined ? undefined : nodePart(up));
    partOfNode.set(id, part);
    return part;
  };
  const parts = new Map();
  profile.samples.forEach((id, index) => {
    const { functionName } = byId.get(id).callFrame;
    if (functionName === '(idle)') return;
    const part = nodePart(id) ?? (functionName === '(garbage collector)' ? '(garbage collector)' : '(Node.js, V8)');
    parts.set(part, (parts.get(part) ?? 0) + (profile.timeDeltas[index] ?? 0) / messages);
  });
  return parts;
}

/**
 * The bytes the newest allocation profile of `label` saw allocated, by part of the code, per
 * message handled (`messages`): each sample goes to the innermost frame of its stack that is ours
 * or a dependency's, as in {@link busyByPart}. A map of part to bytes.
 */
function allocatedByPart(label, messages) {
  const profile = newestProfile(label, '.heapprofile');
  if (profile === undefined) return undefined;
  const parts = new Map();
  const walk = (node, outer) => {
    const part = partOf(node.callFrame) ?? outer;
    const name = part ?? '(Node.js, V8)';
    parts.set(name, (parts.get(name) ?? 0) + node.selfSize / messages);
    for (const child of node.children) walk(child, part);
  };
  walk(profile.head, undefined);
  return parts;
}

/** One table per scenario, a column per collector: `of(label, messages)` gives a map of part to figure. */
function printByPart(title, of, digits) {
  for (const scenario of scenarios) {
    // A process handles its warm-up and its share of the measured messages.
    const measured = columns
      .map((column) => ({ column, parts: of(`${column.label}-${scenario}`, settings.warmup + settings.messages / column.store.processes) }))
      .filter(({ parts }) => parts !== undefined);
    if (measured.length === 0) continue;
    const first = measured[0].parts;
    const names = [...new Set(measured.flatMap(({ parts }) => [...parts.keys()]))].sort((a, b) => (first.get(b) ?? 0) - (first.get(a) ?? 0));
    console.log(`\n### ${title(scenario)}\n\n| part | ${measured.map(({ column }) => column.name).join(' | ')} |\n|---|${measured.map(() => '---:').join('|')}|`);
    const row = (name, value) => console.log(`| ${name} | ${measured.map(({ parts }) => value(parts).toFixed(digits)).join(' | ')} |`);
    for (const name of names) row(name, (parts) => parts.get(name) ?? 0);
    row('**all**', (parts) => sum([...parts.values()]));
  }
}

// ---------------------------------------------------------------- main

const scenarios = args.scenarios.split(',');
const TITLES = {
  healthy: 'one healthy URL',
  stalled: 'a stalled URL and a healthy URL',
  silenced: 'a URL going silent as the run starts, and a healthy URL',
  remote: `one URL answering after ${args['remote-delay']} ms`,
  outage: 'the receiver down while the messages arrive, then up',
  ingest: 'ingestion only (no webhooks): de-duplication on and off',
};
/** The builds the outage scenario runs: those with a journal. */
const outageBuilds = builds.filter((build) => !build.queueless);
if (scenarios.length === 0 || scenarios.some((s) => !(s in TITLES))) fail(`Expected --scenarios to list some of ${Object.keys(TITLES).join(', ')}, got ${JSON.stringify(args.scenarios)}`);
const results = new Map();
const server = args.store === undefined ? undefined : await openServer(args.store);
if (server !== undefined) undo.push(server.stop);
console.error(
  `bench:collector: ${settings.messages} messages, flushAt ${settings.flushAt}, webhook timeout ${settings.timeout} ms, ${settings.rounds} round(s), ` +
    `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}${server === undefined ? '' : `, PostgreSQL: ${server.name}`}`,
);
try {
  for (let round = 0; round < settings.rounds; round++) {
    for (const scenario of scenarios) {
      if (scenario === 'ingest') {
        // Alternate which goes first, so that neither always runs on a warmer machine.
        for (const on of round % 2 === 0 ? [true, false] : [false, true]) {
          const result = await ingestOnly(builds[0], on);
          results.set(`ingest/${on}`, [...(results.get(`ingest/${on}`) ?? []), result]);
          console.error(`  round ${round + 1} ingest  de-duplication ${on ? 'on ' : 'off'}: accepted ${result.accepted}, ${Math.round(result.acceptedPerSecond)} msgs/s${result.complete ? '' : ' (run timeout)'}`);
        }
        continue;
      }
      if (scenario === 'outage') {
        for (const build of round % 2 === 0 ? outageBuilds : [...outageBuilds].reverse()) {
          const result = await outage(build);
          // The healthy scenario's time for the same count, beside it.
          const healthy = await run(build, stores[0], 'healthy', server);
          result.healthySeconds = healthy.complete ? settings.messages / healthy.forwardedPerSecond : Number.NaN;
          results.set(`${build.label}/outage`, [...(results.get(`${build.label}/outage`) ?? []), result]);
          console.error(
            `  round ${round + 1} outage  ${build.name}: forwarded ${result.forwarded}/${result.accepted} accepted, drained in ${result.drainSeconds.toFixed(1)} s, peak RSS ${(result.peakRss / 1024 / 1024).toFixed(0)} MB` +
              `${result.complete ? '' : ' (run timeout)'}`,
          );
        }
        continue;
      }
      // Alternate which column goes first, so that none always runs on a warmer machine.
      const order = round % 2 === 0 ? columns : [...columns].reverse();
      for (const column of order) {
        const result = await run(column.build, column.store, scenario, server);
        const key = `${column.label}/${scenario}`;
        results.set(key, [...(results.get(key) ?? []), result]);
        console.error(
          `  round ${round + 1} ${scenario.padEnd(7)} ${column.name}: forwarded ${result.forwarded}/${settings.messages}, ` +
            (result.failure === undefined ? `${Math.round(result.forwardedPerSecond)} msgs/s${result.complete ? '' : ' (run timeout)'}` : `no figures: ${result.failure}`),
        );
      }
    }
  }
} catch (error) {
  // Ctrl-C stopped the processes the run was using: its failure is no news.
  if (!interrupted) throw error;
} finally {
  await unwind(0);
}

const count = (v) => (Number.isNaN(v) ? '—' : Math.round(v).toLocaleString('en-US'));
const rows = [
  ['accepted msgs/s', (r) => r.acceptedPerSecond, count],
  ['forwarded msgs/s', (r) => r.forwardedPerSecond, count],
  ['p50 acceptance → delivery, ms', (r) => r.p50, (v) => v.toFixed(1)],
  ['p99 acceptance → delivery, ms', (r) => r.p99, (v) => v.toFixed(1)],
  ['collector CPU µs/message (all its processes)', (r) => r.collectorCpuPerMessage, (v) => v.toFixed(0)],
  // The event loop's thread: what it spends per message bounds what one process forwards, once it is busy all the run.
  ['collector main-thread CPU µs/message', (r) => r.mainThreadCpuPerMessage, (v) => v.toFixed(0)],
  ['collector main thread busy from the first send to the last arrival', (r) => r.mainThreadBusy, (v) => `${(v * 100).toFixed(0)} %`],
  ['receiver CPU µs/message', (r) => r.receiverCpuPerMessage, (v) => v.toFixed(0)],
  ['peak RSS of a collector process, MB', (r) => r.peakRss / 1024 / 1024, (v) => v.toFixed(0)],
  ...(server === undefined ? [] : [['SQL statements per delivered message', (r) => r.statementsPerMessage, (v) => v.toFixed(2)]]),
  // Counts, not rates: no ratio is shown for them. `only`: a row of that scenario alone.
  ['messages forwarded', (r) => r.forwarded, (v) => `${v.toLocaleString('en-US')} of ${settings.messages.toLocaleString('en-US')}`, { count: true }],
  ['requests to the stalled URL (the warm-up included)', (r) => r.stalledRequests, count, { count: true, only: 'stalled' }],
  ['requests to the silenced URL once silent', (r) => r.silencedRequests, count, { count: true, only: 'silenced' }],
];
const shown = (format, v) => (Number.isNaN(v) ? 'n/a' : format(v));
const value = (column, scenario, pick) => median((results.get(`${column.label}/${scenario}`) ?? []).map(pick));
/**
 * The median over the rounds of ours ÷ base within each round: the two ran minutes apart at most,
 * so what the machine's load did to both cancels out, which a ratio of the two medians (each from
 * other rounds) does not.
 */
const pairedRatio = (ours, base, scenario, pick) => {
  const a = results.get(`${ours.label}/${scenario}`) ?? [];
  const b = results.get(`${base.label}/${scenario}`) ?? [];
  return median(a.slice(0, b.length).map((result, round) => pick(result) / pick(b[round])));
};
const columnOf = (build, store) => columns.find((column) => column.build === build && column.store === store);
/** Ours against the second build, store by store, then against the bare forwarder (the journal's only). */
const baseline = builds.find((build) => build.label === 'baseline');
const ratios = [
  ...(baseline === undefined ? [] : stores.map((store) => [columnOf(builds[0], store), columnOf(baseline, store), `ratio to ${baseline.name}${stores.length > 1 ? `, ${store.name}` : ''}`])),
  [columnOf(builds[0], stores[0]), columns.find((column) => column.build.label === 'ceiling'), 'ratio to the bare forwarder'],
  // How near the bare forwarder the collector's contract alone allows, and ours against that.
  [columns.find((column) => column.build.label === 'lean-ceiling'), columns.find((column) => column.build.label === 'ceiling'), 'lean collector : bare forwarder'],
  [columnOf(builds[0], stores[0]), columns.find((column) => column.build.label === 'lean-ceiling'), 'ratio to the lean collector'],
].filter(([ours, base]) => ours !== undefined && base !== undefined);
for (const scenario of scenarios.filter((s) => s !== 'outage' && s !== 'ingest')) {
  const title = TITLES[scenario];
  console.log(`\n### ${title} (median of ${settings.rounds}; ratios: the median of each round's)\n`);
  const ratioNames = ratios.map(([, , name]) => name);
  console.log(`| metric | ${[...columns.map((c) => c.name), ...ratioNames].join(' | ')} |`);
  console.log(`|---|${[...columns, ...ratios].map(() => '---:').join('|')}|`);
  for (const [name, pick, format, { count: isCount = false, only } = {}] of rows) {
    if (only !== undefined && only !== scenario) continue;
    const values = columns.map((column) => shown(format, value(column, scenario, pick)));
    const quotients = ratios.map(([ours, base]) => (isCount ? '' : shown((v) => `${v.toFixed(2)}×`, pairedRatio(ours, base, scenario, pick))));
    console.log(`| ${name} | ${[...values, ...quotients].join(' | ')} |`);
  }
  if (server !== undefined) {
    const reasons = new Set(columns.flatMap((column) => (results.get(`${column.label}/${scenario}`) ?? []).map((r) => r.statementsUnavailable)));
    reasons.delete(undefined);
    console.log(
      '\nSQL statements: the `calls` pg_stat_statements counted in the run\'s own database, from after its collectors had opened it ' +
        '(migrations, the pending count and LISTEN not counted) until they had stopped (their last settlements counted), the bench\'s ' +
        `own queries left out; divided by the messages the receiver got.${[...reasons].map((reason) => ` n/a: ${reason}`).join('')}`,
    );
  }
}
if (scenarios.includes('outage')) {
  const mb = (v) => (v / 1024 / 1024).toFixed(1);
  const seconds = (v) => v.toFixed(1);
  const target = (met) => (v) => `${v.toLocaleString('en-US')}${met(v) ? '' : ' (missed)'}`;
  const outageRows = [
    ['messages accepted (answered 200)', (r) => r.accepted, (v) => v.toLocaleString('en-US')],
    ['time to accept them, receiver down, s', (r) => r.acceptSeconds, seconds],
    ['peak RSS of the collector, MB (target ≤ 300)', (r) => r.peakRss / 1024 / 1024, (v) => `${v.toFixed(0)}${v <= 300 ? '' : ' (missed)'}`],
    ['journal before the receiver is back, MB', (r) => r.journalBefore, mb],
    [`journal after the drain (up to ${RECLAIM_WAIT / 1000} s later), MB (target < 10)`, (r) => r.journalAfter, (v) => `${mb(v)}${v < JOURNAL_AFTER_TARGET ? '' : ' (missed)'}`],
    ['time to the first delivery once the receiver is back, s', (r) => r.firstSeconds, seconds],
    ['time to the full drain once the receiver is back, s', (r) => r.drainSeconds, seconds],
    ['healthy scenario: time to forward the same count, s', (r) => r.healthySeconds, seconds],
    ['lost (answered 200, never delivered; target 0)', (r) => r.lost, target((v) => v === 0)],
    ['duplicates (delivered again; target 0)', (r) => r.duplicates, target((v) => v === 0)],
  ];
  console.log(`\n### ${TITLES.outage}: ${settings.messages.toLocaleString('en-US')} messages (median of ${settings.rounds})\n`);
  console.log(`| metric | ${outageBuilds.map((build) => build.name).join(' | ')} |`);
  console.log(`|---|${outageBuilds.map(() => '---:').join('|')}|`);
  for (const [name, pick, format] of outageRows) {
    console.log(`| ${name} | ${outageBuilds.map((build) => shown(format, median((results.get(`${build.label}/outage`) ?? []).map(pick)))).join(' | ')} |`);
  }
}
if (scenarios.includes('ingest')) {
  const of = (on, pick) => median((results.get(`ingest/${on}`) ?? []).map(pick));
  const mb = (v) => (v / 1024 / 1024).toFixed(0);
  console.log(`\n### ${TITLES.ingest}: ${settings.ingestMessages.toLocaleString('en-US')} distinct messageIds, ${builds[0].name} (median of ${settings.rounds})\n`);
  console.log('| metric | de-duplication on | de-duplication off | on ÷ off |\n|---|---:|---:|---:|');
  for (const [name, pick, format] of [
    ['accepted msgs/s', (r) => r.acceptedPerSecond, count],
    ['RSS of the collector after the run, MB', (r) => r.rss, mb],
    ['peak RSS of the collector, MB', (r) => r.peakRss, mb],
    ['messages accepted', (r) => r.accepted, (v) => v.toLocaleString('en-US')],
  ]) {
    console.log(`| ${name} | ${shown(format, of(true, pick))} | ${shown(format, of(false, pick))} | ${shown((v) => `${v.toFixed(2)}×`, of(true, pick) / of(false, pick))} |`);
  }
  const cost = 1 - of(true, (r) => r.acceptedPerSecond) / of(false, (r) => r.acceptedPerSecond);
  const memory = of(true, (r) => r.rss) - of(false, (r) => r.rss);
  const peak = of(true, (r) => r.peakRss) - of(false, (r) => r.peakRss);
  console.log(`\nDe-duplication costs ${(100 * cost).toFixed(1)} % of accepted msgs/s (target ≤ ${100 * DEDUPE_TARGETS.throughputShare} %: ${cost <= DEDUPE_TARGETS.throughputShare ? 'met' : 'missed'}), ` +
    `${mb(memory)} MB of RSS after the run and ${mb(peak)} MB of peak RSS (target ≤ ${mb(DEDUPE_TARGETS.rssBytes)} MB: ${Math.max(memory, peak) <= DEDUPE_TARGETS.rssBytes ? 'met' : 'missed'}).`);
}
for (const added of ['stalled', 'silenced'].filter((scenario) => scenarios.includes('healthy') && scenarios.includes(scenario))) {
  console.log(`\n### ${added} URL added: forwarded msgs/s as a share of the healthy-only figure\n`);
  console.log('| collector | share |\n|---|---:|');
  for (const column of columns) {
    const share = value(column, added, (r) => r.forwardedPerSecond) / value(column, 'healthy', (r) => r.forwardedPerSecond);
    console.log(`| ${column.name} | ${(100 * share).toFixed(1)} % |`);
  }
}
if (server !== undefined) {
  const [journal, one, three] = stores;
  const verdict = (v, met) => (Number.isNaN(v) ? 'n/a' : `${v.toFixed(2)} ${met(v) ? '(met)' : '(missed)'}`);
  console.log('\n### PostgreSQL store against its targets\n');
  console.log('| scenario | build | PG 1 process ÷ journal, forwarded msgs/s (≥ 0.80) | PG 3 processes ÷ PG 1 process, forwarded msgs/s (> 1) | statements per delivered message, PG 1 · PG 3 (≤ 3) |');
  console.log('|---|---|---:|---:|---:|');
  for (const scenario of scenarios) {
    for (const build of builds.filter((b) => !b.queueless)) {
      const forwarded = (store) => value(columnOf(build, store), scenario, (r) => r.forwardedPerSecond);
      const statements = (store) => verdict(value(columnOf(build, store), scenario, (r) => r.statementsPerMessage), (v) => v <= 3);
      console.log(
        `| ${scenario} | ${build.name} | ${verdict(forwarded(one) / forwarded(journal), (v) => v >= 0.8)} | ` +
          `${verdict(forwarded(three) / forwarded(one), (v) => v > 1)} | ${statements(one)} · ${statements(three)} |`,
      );
    }
  }
}
if (args.profile) {
  for (const label of columns.flatMap((column) => scenarios.map((s) => `${column.label}-${s}`))) {
    console.log(`\n### profile of the collector, ${label}: self time\n\n\`\`\`\n${topFunctions(label).join('\n')}\n\`\`\``);
  }
  // Where each collector's main thread spends its time, side by side: the bare forwarder's parts
  // are what any forwarder pays; the rest is the collector's own work.
  printByPart(
    (scenario) => `main thread busy time by part of the code, ${scenario}: µs per message handled (the last round's run, its warm-up included, under the profiler)`,
    busyByPart,
    1,
  );
}
if (args.allocations) {
  printByPart(
    (scenario) => `bytes allocated by part of the code, ${scenario}: per message handled (the last round's run, its start and warm-up included; sampled)`,
    allocatedByPart,
    0,
  );
}
