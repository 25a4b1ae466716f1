import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { signBody, verifySignature } from '../../src/webhooks/index.js';
import { newSecret, realVerifierAccepts } from '../../../../test/helpers/standard-webhooks.js';
import { IN_CI } from '../../../../test/helpers/ci.js';
import { type Loopback, startLoopback } from '../../../../test/helpers/loopback.js';

// The runtime matrix: the built package (`npm run build` first) loaded in each runtime, sending to a
// loopback sink in this process. The runtimes are pinned in test/runtimes/package.json and installed
// by `npm run runtimes:install`; a missing one is skipped here, and fails under CI=true.
const run = promisify(execFile);
const here = new URL('./', import.meta.url).pathname;
const installed = (path: string) => `${here}node_modules/${path}`;

interface Runtime {
  name: string;
  command: string;
  args: string[];
  /** What the client's User-Agent says it runs on; absent where only the signature checks run. */
  userAgent?: RegExp;
  /** Packages of test/runtimes the runner imports besides its command. */
  imports?: string[];
  /** Whether the runtime can gzip (node:zlib or CompressionStream); the client refuses `gzip` where not. */
  gzip?: false;
  /** Whether the package's build for this runtime has node:crypto (the web build, picked by `workerd` or `edge-light`, has not). */
  nodeCrypto?: false;
}

const RUNTIMES: Runtime[] = [
  { name: `Node ${process.version} (this one)`, command: process.execPath, args: ['run-module.mjs'], userAgent: /\(node v\d+/ },
  { name: 'Node 22', command: installed('node22/bin/node'), args: ['run-module.mjs'], userAgent: /\(node v22\./ },
  { name: 'Node 24', command: installed('node24/bin/node'), args: ['run-module.mjs'], userAgent: /\(node v24\./ },
  { name: 'Bun', command: installed('.bin/bun'), args: ['run-module.mjs'], userAgent: /\(bun 1\./ },
  { name: 'Deno', command: installed('.bin/deno'), args: ['run', '--allow-all', 'run-module.mjs'], userAgent: /\(deno 2\./ },
  // miniflare needs Node >= 22.
  {
    name: 'Cloudflare Workers (workerd, nodejs_compat)',
    command: installed('node24/bin/node'),
    args: ['run-workerd.mjs', '--compat'],
    userAgent: /\(Cloudflare-Workers\)/,
    imports: ['miniflare', 'esbuild'],
    nodeCrypto: false,
  },
  {
    name: 'Cloudflare Workers (workerd, without nodejs_compat)',
    command: installed('node24/bin/node'),
    args: ['run-workerd.mjs'],
    userAgent: /\(Cloudflare-Workers\)/,
    imports: ['miniflare', 'esbuild'],
    nodeCrypto: false,
  },
  // The `edge-runtime` package has no CompressionStream (Vercel's own Edge Runtime does).
  { name: 'Vercel Edge Runtime', command: process.execPath, args: ['run-edge.mjs'], userAgent: /\(vercel-edge\)/, imports: ['edge-runtime', 'esbuild'], gzip: false, nodeCrypto: false },
];

const ready = (runtime: Runtime) => existsSync(runtime.command) && (runtime.imports ?? []).every((name) => existsSync(installed(name)));

let sink: Loopback;
/** Requests that found `/…/flaky` already answered 503 once: the next one is accepted. */
const refusedOnce = new Set<string>();
beforeAll(async () => {
  sink = await startLoopback((request, res) => {
    const route = request.url.split('/')[2];
    if (route === 'hang') return; // never answers: only the close() deadline ends the request
    if (route === 'bad') return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"bad batch"}');
    const prefix = request.url.split('/')[1]!;
    if (route === 'flaky' && !refusedOnce.has(prefix)) {
      refusedOnce.add(prefix);
      return void res.writeHead(503).end();
    }
    res.end('{"success":true}');
  });
});
afterAll(() => sink?.close());

describe.each(RUNTIMES.map((runtime, index) => [runtime.name, runtime, `r${index}`] as const))('%s', (_name, runtime, prefix) => {
  const available = ready(runtime);
  it('runs the scenario', async (ctx) => {
    ctx.skip(!available && !IN_CI, `${runtime.name} is not installed (npm run runtimes:install)`);
    expect(available, `${runtime.command} is missing: run npm run runtimes:install`).toBe(true);
    const body = '{"type":"track","event":"Café ☕"}';
    const standard = { secret: newSecret(), other: newSecret(), headers: {}, replayed: {} };
    const headersAt = (at: Date) => ({
      'webhook-id': 'msg_runtime',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new StandardWebhook(standard.secret).sign('msg_runtime', at, body),
    });
    standard.headers = headersAt(new Date());
    standard.replayed = headersAt(new Date(Date.now() - 10 * 60 * 1000));
    const setup = { sink: `${sink.url}/${prefix}`, body, secret: 'shh', signature: signBody(body, 'shh'), standard };
    const { stdout } = await run(runtime.command, [...runtime.args, JSON.stringify(setup)], { cwd: here, timeout: 60_000 });
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!);

    expect(result.signature).toEqual({ good: true, changedBody: false, otherSecret: false, malformed: false });
    // verifyStandardWebhook, from the entry this runtime loads, on what the spec's library signed.
    expect(result.standard).toEqual({ good: true, fetchHeadersAndList: true, otherSecret: false, changedBody: false, replayed: false });

    // The Webhooks destination signs with node:crypto or Web Crypto: the same signature either way.
    const [hook] = sink.requests.filter((r) => r.url === `/${prefix}/webhook`);
    expect(result.webhooks).toMatchObject({ delivered: true, body: JSON.parse(hook!.body), signedAsync: signBody('{}', 'shh') });
    expect(verifySignature(hook!.body, hook!.headers['x-signature'] as string, 'shh')).toBe(true);
    // Standard Webhooks signed with node:crypto or Web Crypto: the real verifiers accept either.
    for (const verifier of ['standardwebhooks', 'svix'] as const) expect(realVerifierAccepts(verifier, [standard.secret], hook!.body, hook!.headers), verifier).toBe(true);
    // Without node:crypto the synchronous signBody says to use signBodyAsync.
    expect(result.webhooks.signedSync).toEqual(runtime.nodeCrypto === false ? { error: 'ERR_UNSUPPORTED_RUNTIME' } : signBody('{}', 'shh'));
    if (!runtime.userAgent) return;
    const received = (route: string) => sink.requests.filter((r) => r.url === `/${prefix}/${route}/v1/batch`);

    expect(result.flush).toEqual({ delivered: 2, failed: 0, dropped: 0 });
    const [batch] = received('ok');
    expect(batch?.headers.authorization).toBe(`Basic ${btoa('wk_runtime:')}`);
    expect(batch?.headers['user-agent']).toMatch(/^batched-analytics\/\d+\.\d+\.\d+ /);
    expect(batch?.headers['user-agent']).toMatch(runtime.userAgent);
    const wire = JSON.parse(batch!.body);
    expect(wire.sentAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(wire.batch).toMatchObject([
      { type: 'identify', userId: 'u1', traits: { plan: 'pro' }, context: { library: { name: 'batched-analytics' } } },
      { type: 'track', userId: 'u1', event: 'Runtime Tested', properties: { n: 1 } },
    ]);
    for (const message of wire.batch) expect(message.messageId).toMatch(/^[0-9a-f-]{36}$/);

    expect(result.retried).toMatchObject({ delivered: 1, failed: 0, retries: 1 });
    expect(received('flaky')).toHaveLength(2);

    expect(result.refused).toMatchObject({ delivered: 0, failed: 1, failures: [{ count: 1, status: 400 }] });
    expect(received('bad')).toHaveLength(1);

    expect(result.deadline.delivered).toBe(0);
    expect(result.deadline.failed + result.deadline.dropped).toBe(1);
    // close() keeps its 300 ms deadline on a request that never ends: a second beyond it, plus
    // however late a timer of 300 ms set beside it fired in that runtime on this run.
    expect(result.deadline.ms).toBeLessThan(300 + result.deadline.lateness + 1_000);

    // gzip: node:zlib where the runtime has it, CompressionStream elsewhere; the sink inflates it.
    if (runtime.gzip === false) {
      expect(result.gzip.error).toMatchObject({ name: 'ConfigError', option: 'gzip' });
      return;
    }
    expect(result.gzip).toMatchObject({ delivered: 1, failed: 0 });
    const [zipped] = received('gzip');
    expect(zipped?.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(zipped!.body).batch).toMatchObject([{ event: 'Compressed', properties: { text: 'ünïcödé ☕' } }]);
  }, 90_000);
});

// The CLI runs on Node (the rest of the suite) and on Bun: `import` sends a file through the client.
describe('the CLI on Bun', () => {
  const bun = RUNTIMES.find(({ name }) => name === 'Bun')!;
  const available = ready(bun);
  it('imports an NDJSON file', async (ctx) => {
    ctx.skip(!available && !IN_CI, 'Bun is not installed (npm run runtimes:install)');
    expect(available, `${bun.command} is missing: run npm run runtimes:install`).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'bun-import-'));
    try {
      const file = join(dir, 'events.ndjson');
      writeFileSync(file, '{"type":"track","userId":"u1","event":"Imported"}\n{"type":"identify","userId":"u1"}\n');
      const cli = new URL('../../dist/cli.js', import.meta.url).pathname;
      await run(bun.command, [cli, 'import', file, '--write-key', 'wk_bun', '--endpoint', `${sink.url}/bun-cli`], { timeout: 60_000 });
      const [batch] = sink.requests.filter((r) => r.url === '/bun-cli/v1/batch');
      expect(JSON.parse(batch!.body).batch).toMatchObject([{ event: 'Imported' }, { type: 'identify' }]);
      expect(batch?.headers['user-agent']).toMatch(bun.userAgent!);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
