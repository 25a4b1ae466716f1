// `npm run bench:collector`: the local collector end to end. The client (this process, the built
// dist/) sends N track calls to a real `batched-analytics serve` child process, which journals
// them and forwards each to a loopback receiver in a third process (bench/receiver.mjs). Two
// scenarios: the source has one healthy webhook URL; or a stalled URL (never answers) and the
// healthy one. With --baseline DIR, the same runs use DIR/dist/cli.js as the collector too (e.g. a
// worktree of an older commit, built), interleaved with ours, and the table shows ratios. With
// --ceiling, bench/bare-forwarder.mjs runs as a third collector: what one HTTP request per message
// allows on this machine. Loopback only; every run is bounded by --run-timeout. A benchmark, not a test.
//
//   npm run bench:collector -- [--messages N (10000)] [--timeout MS (1000, the webhooks' timeout)]
//                              [--flush-at N (100)] [--rounds N (1)] [--baseline DIR]
//                              [--run-timeout S (30)] [--scenarios healthy,stalled] [--ceiling] [--profile (node --cpu-prof the collector
//                              into bench/profiles/ and print its top functions)]
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Analytics } from '../dist/index.js';
import { nextMessage } from './ipc.mjs';

const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '10000' },
    timeout: { type: 'string', default: '1000' },
    'flush-at': { type: 'string', default: '100' },
    rounds: { type: 'string', default: '1' },
    baseline: { type: 'string' },
    'run-timeout': { type: 'string', default: '30' },
    profile: { type: 'boolean', default: false },
    ceiling: { type: 'boolean', default: false },
    scenarios: { type: 'string', default: 'healthy,stalled' },
  },
});

function positiveInteger(name) {
  const value = Number(args[name]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`Expected --${name} to be an integer >= 1, got ${args[name]}`);
  return value;
}

const settings = {
  messages: positiveInteger('messages'),
  timeout: positiveInteger('timeout'),
  flushAt: positiveInteger('flush-at'),
  rounds: positiveInteger('rounds'),
  runTimeoutMs: positiveInteger('run-timeout') * 1000,
};
/** The collectors compared: this build first, the one the ratios divide by second. */
const builds = [{ name: 'this build', label: 'ours', script: here('../dist/cli.js') }];
if (args.baseline !== undefined) {
  const root = path.resolve(args.baseline);
  builds.push({ name: `baseline (${path.basename(root)})`, label: 'baseline', script: path.join(root, 'dist/cli.js') });
}
if (args.ceiling) builds.push({ name: 'bare forwarder', label: 'ceiling', script: here('./bare-forwarder.mjs') });
const PROFILES = here('./profiles');
const clock = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------- processes


async function startReceiver() {
  const child = fork(here('./receiver.mjs'), [], { stdio: 'inherit' });
  const { healthy, stalled } = await nextMessage(child, 'listening');
  const { pid } = child;
  const ask = (type) => {
    const reply = nextMessage(child, type);
    child.send({ type });
    return reply;
  };
  return {
    healthy,
    stalled,
    cpuMs: () => cpuMsOf(pid),
    count: async () => (await ask('count')).count,
    report: () => ask('report'),
    stop: () => new Promise((resolve) => child.once('exit', resolve).disconnect()),
  };
}

/** A `serve` child process of one build, with its URL once it printed it. */
async function startCollector(build, config, dataDir, label) {
  const execArgv = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES}`, `--cpu-prof-name=collector-${label}-${Date.now()}.cpuprofile`] : [];
  const child = spawn(process.execPath, [...execArgv, build.script, 'serve', '--config', config, '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
    createInterface({ input: child.stdout }).once('line', resolve);
  });
  return {
    url,
    /** The process's peak resident set, from Linux's /proc; undefined elsewhere. */
    peakRss: () => {
      const kb = /VmHWM:\s+(\d+) kB/.exec(procFile(child.pid, 'status'))?.[1];
      return kb === undefined ? undefined : Number(kb) * 1024;
    },
    /** CPU time the process used so far (user + system), in ms, from Linux's /proc; undefined elsewhere. */
    cpuMs: () => cpuMsOf(child.pid),
    stop: () => new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM')),
  };
}

function procFile(pid, name) {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return '';
  }
}

/** utime + stime (fields 14 and 15 of /proc/PID/stat, after the command in parentheses), at 100 ticks/s. */
function cpuMsOf(pid) {
  const fields = procFile(pid, 'stat').split(') ')[1]?.split(' ');
  return fields === undefined ? undefined : (Number(fields[11]) + Number(fields[12])) * 10;
}

// ---------------------------------------------------------------- one run

async function run(build, scenario) {
  const temp = mkdtempSync(path.join(tmpdir(), 'bench-collector-'));
  const receiver = await startReceiver();
  const webhooks = scenario === 'stalled' ? [{ url: receiver.stalled }, { url: receiver.healthy }] : [{ url: receiver.healthy }];
  const config = path.join(temp, 'collector.json');
  writeFileSync(
    config,
    JSON.stringify({ sources: [{ name: 'bench', writeKey: 'wk_bench', destinations: { Webhooks: { webhooks } } }], delivery: { timeout: settings.timeout } }),
  );
  const label = `${build.label}-${scenario}`;
  const collector = await startCollector(build, config, path.join(temp, 'data'), label);
  try {
    const acceptedAt = new Array(settings.messages);
    const analytics = new Analytics('wk_bench', { endpoint: collector.url, flushAt: settings.flushAt, maxQueueSize: settings.messages });
    const started = clock();
    const deadline = started + settings.runTimeoutMs;
    for (let seq = 0; seq < settings.messages; seq++) {
      analytics.track({ userId: `user-${seq % 100}`, event: 'Order Completed', properties: { seq, total: 30, currency: 'EUR', sku: 'sku-1234' } }, (error) => {
        if (error === undefined) acceptedAt[seq] = clock();
      });
    }
    const summary = await analytics.close({ timeout: settings.runTimeoutMs });
    const acceptedEnd = clock();
    let forwarded = 0;
    while ((forwarded = await receiver.count()) < summary.delivered && clock() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const forwardedEnd = clock();
    const peakRss = collector.peakRss();
    const cpu = { collector: collector.cpuMs(), receiver: receiver.cpuMs() };
    const report = await receiver.report();
    const latencies = report.arrivals.filter(([seq]) => acceptedAt[seq] !== undefined).map(([seq, at]) => at - acceptedAt[seq]).sort((a, b) => a - b);
    return {
      accepted: summary.delivered,
      forwarded,
      acceptedPerSecond: summary.delivered / ((acceptedEnd - started) / 1000),
      forwardedPerSecond: forwarded / ((forwardedEnd - started) / 1000),
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      peakRss,
      collectorCpuPerMessage: (cpu.collector * 1000) / settings.messages,
      receiverCpuPerMessage: (cpu.receiver * 1000) / settings.messages,
      stalledRequests: report.stalledRequests,
      complete: forwarded === settings.messages,
    };
  } finally {
    await collector.stop();
    await receiver.stop();
    rmSync(temp, { recursive: true, force: true });
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

/** The functions with the most self time in the newest profile of `label`. */
function topFunctions(label, count = 12) {
  const file = readdirSync(PROFILES).filter((name) => name.startsWith(`collector-${label}-`)).sort().at(-1);
  if (file === undefined) return [];
  const profile = JSON.parse(readFileSync(path.join(PROFILES, file), 'utf8'));
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

// ---------------------------------------------------------------- main

const scenarios = args.scenarios.split(',');
if (scenarios.length === 0 || scenarios.some((s) => s !== 'healthy' && s !== 'stalled')) throw new Error(`Expected --scenarios to list healthy and/or stalled, got ${args.scenarios}`);
const results = new Map();
console.error(
  `bench:collector: ${settings.messages} messages, flushAt ${settings.flushAt}, webhook timeout ${settings.timeout} ms, ${settings.rounds} round(s), ` +
    `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}`,
);
for (let round = 0; round < settings.rounds; round++) {
  for (const scenario of scenarios) {
    // Alternate which build goes first, so that neither always runs on a warmer machine.
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) {
      const result = await run(build, scenario);
      const key = `${build.name}/${scenario}`;
      results.set(key, [...(results.get(key) ?? []), result]);
      console.error(
        `  round ${round + 1} ${scenario.padEnd(7)} ${build.name}: forwarded ${result.forwarded}/${settings.messages}, ` +
          `${Math.round(result.forwardedPerSecond)} msgs/s${result.complete ? '' : ' (run timeout)'}`,
      );
    }
  }
}

const rows = [
  ['accepted msgs/s', (r) => r.acceptedPerSecond, (v) => Math.round(v).toLocaleString('en-US')],
  ['forwarded msgs/s', (r) => r.forwardedPerSecond, (v) => Math.round(v).toLocaleString('en-US')],
  ['p50 acceptance → delivery, ms', (r) => r.p50, (v) => v.toFixed(1)],
  ['p99 acceptance → delivery, ms', (r) => r.p99, (v) => v.toFixed(1)],
  ['collector CPU µs/message', (r) => r.collectorCpuPerMessage, (v) => v.toFixed(0)],
  ['receiver CPU µs/message', (r) => r.receiverCpuPerMessage, (v) => v.toFixed(0)],
  ['peak RSS of the collector, MB', (r) => r.peakRss / 1024 / 1024, (v) => v.toFixed(0)],
  ['messages forwarded', (r) => r.forwarded, (v) => `${v.toLocaleString('en-US')} of ${settings.messages.toLocaleString('en-US')}`],
];
const value = (build, scenario, pick) => median((results.get(`${build.name}/${scenario}`) ?? []).map(pick));
for (const scenario of scenarios) {
  const title = scenario === 'healthy' ? 'one healthy URL' : 'a stalled URL and a healthy URL';
  console.log(`\n### ${title} (median of ${settings.rounds})\n`);
  console.log(`| metric | ${builds.map((b) => b.name).join(' | ')} |${builds.length > 1 ? ` ratio to ${builds[1].name} |` : ''}`);
  console.log(`|---|${builds.map(() => '---:').join('|')}|${builds.length > 1 ? '---:|' : ''}`);
  for (const [name, pick, format] of rows) {
    const values = builds.map((build) => value(build, scenario, pick));
    const ratio = builds.length > 1 && name !== 'messages forwarded' ? ` ${(values[0] / values[1]).toFixed(2)}× |` : builds.length > 1 ? ' |' : '';
    console.log(`| ${name} | ${values.map(format).join(' | ')} |${ratio}`);
  }
}
if (scenarios.length === 2) {
  console.log('\n### stalled URL added: forwarded msgs/s as a share of the healthy-only figure\n');
  console.log('| build | share |\n|---|---:|');
  for (const build of builds) {
    const share = value(build, 'stalled', (r) => r.forwardedPerSecond) / value(build, 'healthy', (r) => r.forwardedPerSecond);
    console.log(`| ${build.name} | ${(100 * share).toFixed(1)} % |`);
  }
}
if (args.profile) {
  for (const label of builds.flatMap((build) => scenarios.map((s) => `${build.label}-${s}`))) {
    console.log(`\n### profile of the collector, ${label}: self time\n\n\`\`\`\n${topFunctions(label).join('\n')}\n\`\`\``);
  }
}
